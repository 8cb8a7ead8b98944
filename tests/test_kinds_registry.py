"""The registry of answer kinds (issue 30.1): every verifier, code and file name of a kind comes from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arbiter.demo.grounded.build import demo_items, write_jsonl
from arbiter.kinds import GROUNDED, KINDS, MEDICAL, contracts, kind, resolve
from arbiter.run.item_batch import ANSWER_FILE, DECISION_FILE, run_items
from arbiter.verifiers.grounded.subject import load_item

NAMES = ["V1", "V2", "V3", "V4"]


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_builds_its_four_verifiers_with_the_registered_names_and_files(name: str) -> None:
    """A kind's built verifiers are V1–V4 with the name and output file its registry entry gives."""
    spec = kind(name)
    built = spec.build_verifiers()
    assert [v.name for v in built] == [s.name for s in spec.verifiers] == NAMES
    assert [v.output_file for v in built] == list(spec.output_files)


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_has_one_catalogue_with_every_verifier_error(name: str) -> None:
    """Each kind's catalogue holds a VERIFIER_ERROR blocker per verifier and only V1–V4 codes."""
    catalogue = kind(name).catalogue()
    for verifier in NAMES:
        assert f"{verifier}.VERIFIER_ERROR" in catalogue
    assert all(code.split(".")[0] in NAMES for code in catalogue)


def test_kinds_share_only_the_runners_crash_codes_with_one_meaning() -> None:
    """Two kinds never reuse a code for another meaning: only VERIFIER_ERROR is shared, and identically."""
    medical, grounded = kind(MEDICAL).catalogue(), kind(GROUNDED).catalogue()
    shared = set(medical) & set(grounded)
    assert shared == {f"{v}.VERIFIER_ERROR" for v in NAMES}
    assert all(medical[c] == grounded[c] for c in shared)


def test_the_default_kind_is_medical_and_an_unknown_one_is_refused() -> None:
    """No name means the medical classification; an unknown name is a one-line configuration error."""
    assert kind(None).name == MEDICAL
    with pytest.raises(Exception, match="Unknown kind"):
        kind("poetry")


def test_every_registered_contract_resolves_to_a_model_with_a_schema() -> None:
    """Each contract named in the registry is a pydantic model whose JSON Schema can be printed."""
    for name, (_, contract) in contracts().items():
        assert resolve(contract.model).model_json_schema()["type"] == "object", name


def test_grounded_demo_emits_only_catalogue_codes_and_no_check_crashes(tmp_path: Path) -> None:
    """Run over the demo corpus, every grounded issue code is in the kind's catalogue and no verifier errored."""
    spec = kind(GROUNDED)
    items = write_jsonl(demo_items(), tmp_path / "items.jsonl")
    run_items(spec, [items], tmp_path / "out")
    codes, statuses = set(), set()
    for folder in (tmp_path / "out" / "agent_outputs").iterdir():
        for file in spec.output_files:
            result = json.loads((folder / file).read_text())["attempts"][-1]["result"]
            statuses.add(result["status"])
            codes |= {issue["code"] for issue in result["issues"]}
    assert codes
    assert codes <= set(spec.catalogue())
    assert "ERRORED" not in statuses


def test_a_grounded_run_writes_exactly_the_registered_files(tmp_path: Path) -> None:
    """Each item's folder holds the item as given, its decision and the four files the registry names (and
    the fixed answer when a fix applied), nothing else."""
    spec = kind(GROUNDED)
    items = write_jsonl(demo_items()[:2], tmp_path / "items.jsonl")
    run_items(spec, [items], tmp_path / "out")
    for folder in (tmp_path / "out" / "agent_outputs").iterdir():
        names = {p.name for p in folder.iterdir()} - {"classification_fixed.json"}
        assert names == {ANSWER_FILE, DECISION_FILE, *spec.output_files}


def test_the_registered_loader_is_the_one_verifiers_read() -> None:
    """The grounded kind's loader is the subject loader its verifiers expect."""
    assert kind(GROUNDED).subject_loader() is load_item
