"""The Metrics page's What-if panel for admins (Streamlit calls only; the logic is arbiter.whatif.panel).
Everything shown from the store is plain text: st.text and st.dataframe, never Markdown."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import streamlit as st

from arbiter.contracts.profile import Profile, load_profile
from arbiter.errors import ConfigError
from arbiter.outputs import is_url
from arbiter.whatif import panel
from arbiter.whatif.report import figure_rows, flip_rows, headline, render_html, strata_rows


@st.cache_data(ttl=300, show_spinner="Deciding the recorded documents again…", max_entries=4)
def _simulate(
    db_url: str, candidate_json: str, as_of: datetime | None, output_root: str | None
) -> dict[str, Any]:
    candidate = Profile.model_validate_json(candidate_json)
    # A folder is a Path; an object storage URL (the run's `--out s3://…`) stays a string (bundles are read there).
    where: str | Path | None = output_root if output_root and is_url(output_root) else None
    if where is None and output_root:
        where = Path(output_root)
    return panel.run(db_url, candidate, as_of=as_of, output_root=where)


def _candidate(output_root: Path | None) -> Profile | None:
    choices = panel.profile_choices(output_root)
    source = st.radio(
        "Candidate profile", ["Pick a profile", "Upload a TOML file"], key="whatif_source", horizontal=True
    )
    try:
        if source == "Upload a TOML file":
            upload = st.file_uploader("Profile (TOML)", type=["toml"], key="whatif_upload")
            return panel.profile_from_upload(upload.getvalue()) if upload is not None else None
        label = st.selectbox("Profile", list(choices), key="whatif_pick", index=None)
        return load_profile(choices[label]) if label else None
    except ConfigError as exc:
        st.error(str(exc))
        return None


def show(
    db_url: str, as_of: datetime | None, output_root: Path | None, output_url: str | None = None
) -> None:
    st.subheader("What-if: a candidate profile on the recorded history")
    st.text(
        "Decides every recorded document again under the candidate and compares it with what was decided. "
        "Read-only; no language-model call."
    )
    candidate = _candidate(output_root)
    if candidate is None or not st.button("Simulate", key="whatif_run"):
        return
    where = str(output_root) if output_root else output_url
    report = _simulate(db_url, candidate.model_dump_json(), as_of, where)
    for line in headline(report):
        st.text(line)
    for line in report["changes"] or ["No difference from the bundled profile."]:
        st.text(f"- {line}")
    st.dataframe(
        panel.table(("figure", "current", "candidate"), figure_rows(report)),
        hide_index=True,
        key="whatif_figures",
    )
    st.dataframe(
        panel.table(("group", "accepted", "false accepts among the reviewed"), strata_rows(report)),
        hide_index=True,
        key="whatif_strata",
    )
    flips = panel.table(("doc_id", "from", "to", "candidate's rule", "current rule"), flip_rows(report, None))
    st.text(f"Flips: {len(flips):,}")
    if flips:
        st.dataframe(flips, hide_index=True, key="whatif_flips")
    st.download_button(
        "Download the comparison (HTML)",
        render_html(report, report["changes"]),
        file_name="arbiter-whatif.html",
        mime="text/html",
        key="whatif_download",
    )
