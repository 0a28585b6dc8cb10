"""Folder markers (:mod:`biaskit.ownership`: ``biaskit_export.json``, ``biaskit_bold_export.manifest``, a report's
``report_files.json``, ...): the declared keys of a marker and of one listed file. The reader is
:func:`biaskit.ownership.read_marker` (through :func:`biaskit.jsonread.read_back`: depth and size limits; a marker that
does not keep the declaration is not biaskit's, so nothing listed in it is deleted)."""

from __future__ import annotations

from biaskit.inputs import Field

#: a folder's marker (:mod:`biaskit.ownership`: ``biaskit_export.json``, ``biaskit_bold_export.manifest``, ...): who
#: wrote it, for which kind of output, and the files it lists (relative path -> sha256, or one of
#: :data:`MARKER_FILE_FIELDS`); the command's own facts (``command``, ``layout``, ``fingerprint``) are kept unchecked
MARKER_FIELDS = {
    "written_by": Field("str", required=True, nullable=False),
    "kind": Field("str", required=True, nullable=False),
    "files": Field("object", required=True, nullable=False),
}
#: one listed file of a marker written with sizes (``hub stage``)
MARKER_FILE_FIELDS = {"bytes": Field("int", minimum=0), "sha256": Field("str", required=True, nullable=False)}
