"""Build corpus/sources/note-aci-bench from microsoft/clinical_visit_note_summarization_corpus.

Usage: python3 note-aci-bench.py <path-to-fetched-git-dir> [<out-dir>]

Takes the ACI-Bench training split (data/aci-bench/challenge_data/train.csv, the synthetic,
role-played visits of the virtassist, virtscribe and aci subsets; the MTS-Dialog part of that
repository is derived from MTSamples and is NOT used) and prints each encounter's clinical note
(the "note" column, the scribe-written visit note, unchanged) under a light clinic header built
from train_metadata.csv (patient name, age, sex, chief complaint). Lines are wrapped at 95.
"""
import csv, io, os, subprocess, sys, textwrap

REPO = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "sources", "note-aci-bench")
SID = "note-aci-bench"
PICK = {"virtassist": 10, "virtscribe": 8, "aci": 12}
WIDTH = 95


def show(path):
    return subprocess.run(["git", "--git-dir", REPO, "show", "HEAD:" + path],
                          capture_output=True, text=True, check=True).stdout


def wrap(text):
    out = []
    for line in text.splitlines():
        line = line.rstrip()
        if len(line) <= WIDTH:
            out.append(line)
            continue
        ind = len(line) - len(line.lstrip())
        sub = " " * (ind + (2 if line.lstrip()[:1] in "•-*" else 0))
        out.extend(textwrap.wrap(line, WIDTH, subsequent_indent=sub,
                                 break_long_words=True, break_on_hyphens=False))
    return out


def main():
    base = "data/aci-bench/challenge_data/"
    rows = list(csv.DictReader(io.StringIO(show(base + "train.csv"))))
    meta = {m["encounter_id"]: m for m in csv.DictReader(io.StringIO(show(base + "train_metadata.csv")))}
    count = {k: 0 for k in PICK}
    docs = []
    for r in rows:
        ds = r["dataset"]
        if ds not in PICK or count[ds] >= PICK[ds]:
            continue
        count[ds] += 1
        m = meta.get(r["encounter_id"], {})
        name = " ".join(x.strip().title() for x in (m.get("patient_firstname", ""), m.get("patient_familyname", "")) if x.strip())
        title = {"virtassist": "OFFICE VISIT NOTE", "virtscribe": "CLINIC NOTE", "aci": "OUTPATIENT VISIT NOTE"}[ds]
        head = [title, ""]
        head.append("Patient: %-34s Age: %-6s Sex: %s" % (name or "(not stated)", m.get("patient_age", "").strip(),
                                                           m.get("patient_gender", "").strip()))
        head.append("Encounter: %s" % r["encounter_id"])
        if m.get("cc"):
            head.append("Visit reason: %s" % m["cc"].strip())
        head += ["-" * 60, ""]
        lines = [l.rstrip() for l in head + wrap(r["note"].strip())]
        lines = [l for i, l in enumerate(lines) if not (l == "" and i and lines[i - 1] == "")]
        n = len(docs) + 1
        did = "%s-%d" % (SID, n)
        with open(os.path.join(OUT, did + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines).rstrip() + "\n")
        docs.append((did, title, "data/aci-bench/challenge_data/train.csv#" + r["encounter_id"], len(lines)))
    with open(os.path.join(OUT, "docs.toml"), "w", encoding="utf-8") as f:
        for did, title, origin, _ in docs:
            f.write('[[doc]]\nid = "%s"\ntype = "CLINICAL_NOTE"\nfile = "%s.txt"\norigin = "%s"\ntitle = "%s"\n\n'
                    % (did, did, origin, title))
    for d in docs:
        print(d)


main()
