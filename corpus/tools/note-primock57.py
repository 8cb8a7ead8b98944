"""Build corpus/sources/note-primock57 from babylonhealth/primock57 (CC-BY-4.0).

Usage: python3 note-primock57.py <path-to-fetched-git-dir> [<out-dir>]

PriMock57 holds 57 mock primary-care consultations (clinicians with staff acting as patients
from case cards); notes/dayN_consultationNN.json has the note the consulting clinician wrote.
Each of the first 40 notes (in file order) is printed unchanged under a short header with the
consultation day/number and the patient's presenting complaint (both from the same JSON file).
Lines are wrapped at 95 columns.
"""
import json, os, subprocess, sys, textwrap

REPO = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "sources", "note-primock57")
SID = "note-primock57"
LIMIT = 40
WIDTH = 95


def git(*a):
    return subprocess.run(["git", "--git-dir", REPO] + list(a), capture_output=True, check=True).stdout.decode("utf-8")


def wrap(lines):
    out = []
    for l in lines:
        l = l.rstrip()
        if len(l) <= WIDTH:
            out.append(l)
        else:
            ind = len(l) - len(l.lstrip())
            out.extend(textwrap.wrap(l, WIDTH, subsequent_indent=" " * ind, break_on_hyphens=False))
    return out


def main():
    files = sorted(f for f in git("ls-tree", "-r", "--name-only", "HEAD", "notes").splitlines() if f.endswith(".json"))
    docs = []
    for path in files[:LIMIT]:
        d = json.loads(git("show", "HEAD:" + path))
        head = ["Consultation Note", "",
                "Primary care consultation - day %s, consultation %s" % (d["day"], d["consultation"]),
                "Presenting complaint (patient's words): \"%s\"" % d["presenting_complaint"].strip(), ""]
        body = d["note"].replace("\r", "").strip().splitlines()
        lines = wrap(head + body)
        res = []
        for l in lines:
            if l == "" and res and res[-1] == "":
                continue
            res.append(l)
        did = "%s-%d" % (SID, len(docs) + 1)
        with open(os.path.join(OUT, did + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(res).rstrip() + "\n")
        docs.append((did, path))
    with open(os.path.join(OUT, "docs.toml"), "w", encoding="utf-8") as f:
        for did, path in docs:
            f.write('[[doc]]\nid = "%s"\ntype = "CLINICAL_NOTE"\nfile = "%s.txt"\norigin = "%s"\ntitle = "Consultation Note"\n\n'
                    % (did, did, path))
    print(len(docs))


main()
