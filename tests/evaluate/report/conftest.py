"""A small hand-built scored run folder (tables as the contracts describe them) for the report tests."""

import json

import numpy as np
import pyarrow as pa
import pytest

from biaskit.io import write_table

GROUPS = {
    "gender": ["American_actors", "American_actresses"],
    "race": ["African_Americans", "European_Americans"],
    "profession": ["nursing_specialties", "engineering_branches", "dance_occupations"],
}
MODELS = ["wikipedia", "gpt2"]


def make_scores(n_per=30, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for dom, groups in GROUPS.items():
        for gi, g in enumerate(groups):
            for m in MODELS:
                for i in range(n_per):
                    comp = float(np.clip(rng.normal(0.1 * gi - (0.15 if m == "gpt2" else 0), 0.4), -1, 1))
                    bad = i == 0 and m == "gpt2"  # one failed row per group of the model: null + error
                    rows.append(
                        {
                            "prompt_id": f"{dom}-{g}-{i}",
                            "text": "x",
                            "sample_index": 0,
                            "model": m,
                            "kind": "generate",
                            "domain": dom,
                            "group": g,
                            "continuation": "y",
                            "vader_compound": None if bad else comp,
                            "vader_label": None if bad else ("positive" if comp >= 0.05 else "negative" if comp <= -0.05 else "neutral"),
                            "vader_error": "empty continuation" if bad else None,
                            "toxicity_score": float(rng.uniform(0, 0.6)),
                            "toxicity_label": "toxic" if rng.uniform() < 0.1 + 0.05 * gi else "non-toxic",
                            "regard_label": str(
                                rng.choice(["positive", "neutral", "negative", "other"], p=[0.4, 0.3, 0.2 + 0.05 * gi, 0.1 - 0.05 * gi])
                            ),
                            "gender_unigram_label": str(rng.choice(["male", "female", "neutral"], p=[0.5 - 0.2 * gi, 0.2 + 0.2 * gi, 0.3])),
                            "gender_wavg_label": str(rng.choice(["male", "female", "neutral"], p=[0.6 - 0.25 * gi, 0.1 + 0.25 * gi, 0.3])),
                            "gender_max_label": str(rng.choice(["male", "female", "neutral"], p=[0.45, 0.35, 0.2])),
                            "norms_valence_class": str(rng.choice(["positive", "neutral", "negative"])),
                            "norms_joy_class": str(rng.choice(["positive", "neutral"])),
                        }
                    )
    return pa.Table.from_pylist(rows)


def make_likelihoods(seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for axis, descs in {"ability": ["Deaf", "blind", "wheelchair-using"], "age": ["young", "old", "middle-aged", "senior"]}.items():
        for t, template in enumerate(["I'm {noun_phrase}.", "I love being {noun_phrase}."]):
            for di, d in enumerate(descs):
                for noun in ["woman", "man", "person", "guy", "gal", "parent", "veteran", "kid"]:
                    ppl = float(np.exp(rng.normal(3 + 0.5 * di * (axis == "ability"), 0.2)))
                    rows.append(
                        {
                            "prompt_id": f"{axis}-{t}-{d}-{noun}",
                            "text": template.replace("{noun_phrase}", f"a {d} {noun}"),
                            "sample_index": 0,
                            "model": "tiny-lm",
                            "kind": "likelihood",
                            "axis": axis,
                            "descriptor": d,
                            "template": template,
                            "noun": noun,
                            "perplexity": ppl,
                            "nll_mean": float(np.log(ppl)),
                            "n_tokens": 7,
                        }
                    )
    return pa.Table.from_pylist(rows)


def make_fillins(seed=0):
    rng = np.random.default_rng(seed)
    cats = ["an", "re", "pr", "ps", "om", "qas"]
    rows = []
    for lang in ["en", "pl"]:
        for subj in ["female", "male"]:
            for i in range(40):
                hurt = bool(rng.uniform() < (0.15 if subj == "female" else 0.08))
                rows.append(
                    {
                        "prompt_id": f"h-{lang}-{subj}-{i}",
                        "text": "[M]",
                        "sample_index": i % 5,
                        "model": "tiny-mlm",
                        "kind": "fill_mask",
                        "language": lang,
                        "subject_category": subj,
                        "token": "w",
                        "honest_hurtful": hurt,
                        "honest_categories": ",".join(rng.choice(cats, size=2, replace=False)) if hurt else "",
                        "honest_error": None,
                        "validity_valid": i % 3 != 0,
                        "validity_error": None,
                    }
                )
    return pa.Table.from_pylist(rows)


def make_agreement():
    import pandas as pd

    # (pa.Table.from_pylist takes its columns from the first row only, so go through pandas)
    return pa.Table.from_pandas(
        pd.DataFrame(
            [
                {
                    "round": "r1",
                    "measure": "fleiss_kappa",
                    "estimate": 0.61,
                    "task_type": "sentiment",
                    "metric": None,
                    "n_items": 60,
                    "n_annotators": 3,
                },
                {
                    "round": "r1",
                    "measure": "accuracy",
                    "estimate": 0.78,
                    "task_type": "sentiment",
                    "metric": "vader",
                    "n_items": 60,
                    "ci_low": 0.67,
                    "ci_high": 0.87,
                },
                {
                    "round": "r1",
                    "measure": "f1_weighted",
                    "estimate": 0.74,
                    "task_type": "sentiment",
                    "metric": "vader",
                    "n_items": 60,
                    "ci_low": 0.62,
                    "ci_high": 0.84,
                },
                {
                    "round": "r1",
                    "measure": "accuracy",
                    "estimate": 0.70,
                    "task_type": "regard",
                    "metric": "regard",
                    "n_items": 60,
                    "ci_low": 0.58,
                    "ci_high": 0.81,
                },
                {
                    "round": "r1",
                    "measure": "spearman_rho",
                    "estimate": 0.55,
                    "task_type": "sentiment",
                    "metric": "vader",
                    "n_items": 60,
                    "p_value": 1e-5,
                },
                # per-group validity rows (annotate validate --by group): the "Is the metric fair?" section
                {
                    "round": "r1",
                    "measure": "group_accuracy",
                    "estimate": 0.9,
                    "task_type": "sentiment",
                    "metric": "vader",
                    "n_items": 30,
                    "ci_low": 0.8,
                    "ci_high": 0.97,
                    "group_by": "group",
                    "group": "A",
                },
                {
                    "round": "r1",
                    "measure": "group_accuracy",
                    "estimate": 0.6,
                    "task_type": "sentiment",
                    "metric": "vader",
                    "n_items": 30,
                    "ci_low": 0.43,
                    "ci_high": 0.77,
                    "group_by": "group",
                    "group": "B",
                },
                {
                    "round": "r1",
                    "measure": "diff_accuracy",
                    "estimate": 0.3,
                    "task_type": "sentiment",
                    "metric": "vader",
                    "n_items": 60,
                    "ci_low": 0.1,
                    "ci_high": 0.5,
                    "group_by": "group",
                    "group_a": "A",
                    "group_b": "B",
                    "p_value": 0.01,
                    "p_holm": 0.01,
                },
            ]
        ).astype({"n_annotators": "Int64", "n_items": "Int64"}),
        preserve_index=False,
    )


def write_run(run_dir, *, scores=True, likelihoods=True, fillins=True, agreement=True):
    run_dir.mkdir(parents=True, exist_ok=True)
    tables = {}
    if scores:
        write_table(make_scores(), run_dir / "scores.parquet", stage="scores")
        tables["scores"] = "scores.parquet"
    if likelihoods:
        write_table(make_likelihoods(), run_dir / "likelihoods.parquet", stage="generations")
        tables["likelihoods"] = "likelihoods.parquet"
    if fillins:
        write_table(make_fillins(), run_dir / "fillins.parquet", stage="scores")
        tables["fillins"] = "fillins.parquet"
    if agreement:
        write_table(make_agreement(), run_dir / "agreement.parquet", stage="agreement")
        tables["agreement"] = "agreement.parquet"
    (run_dir / "manifest.json").write_text(
        json.dumps({"command": "test run", "seed": 0, "tables": tables, "summary": [["score", "hand-built scores"]]}), encoding="utf-8"
    )
    return run_dir


@pytest.fixture(scope="session")
def make_run():
    """``write_run`` as a fixture (tests need not import this conftest by name)."""
    return write_run


@pytest.fixture(scope="session")
def full_run(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("run") / "run")


@pytest.fixture(scope="session")
def full_report(full_run, tmp_path_factory):
    from biaskit.evaluate.report import build_report

    return build_report(full_run, tmp_path_factory.mktemp("rep") / "report", n_boot=200)
