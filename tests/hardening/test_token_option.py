"""No Label Studio token on the command line (README: "no token is taken on the command line")."""

from typer.testing import CliRunner

from biaskit.cli import app


def test_annotate_push_and_pull_have_no_token_option(tmp_path):
    runner = CliRunner()
    for cmd in ("push", "pull"):
        r = runner.invoke(app, ["annotate", cmd, "--help"], terminal_width=200)
        assert r.exit_code == 0 and "--token" not in r.output
        r = runner.invoke(app, ["annotate", cmd, str(tmp_path / "s.parquet"), "--token", "sk-on-the-command-line"], terminal_width=200)
        assert r.exit_code == 2 and "No such option" in r.output and "--token" in r.output


def test_token_is_read_from_the_environment_only(monkeypatch):
    from biaskit.annotate.labelstudio import LabelStudio
    from biaskit.errors import BiaskitError

    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    try:
        LabelStudio("http://127.0.0.1:9")
    except BiaskitError as exc:
        assert exc.code == "E090" and "LABEL_STUDIO_API_KEY" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("no error without a token")
