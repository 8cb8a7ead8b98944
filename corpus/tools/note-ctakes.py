"""Build corpus/sources/note-ctakes from apache/ctakes (Apache-2.0).

Usage: python3 note-ctakes.py <path-to-fetched-git-dir> [<out-dir>]

Uses the fictional example notes shipped in ctakes-examples/src/user/resources/org/apache/ctakes/
examples/notes/: the plain-text notes of annotated/ (written for cTAKES as "case descriptions"),
the apache_con/basic/Patient123 note and surgical pathology report, and small/dr_nutritious_1.txt.
Light clean-up only: the annotators' meta lines ("Case description for C-Takes documenting",
"Note detail level", "Level of abbreviation") are dropped and Setting/Specialty are kept as a
header under a title made from them; "[start section ...]"/"[meta ...]" markers are removed;
"Text: " template prefixes are removed; '?' used as a line separator becomes a line break.
Lines are wrapped at 95 columns.
"""
import os, re, subprocess, sys, textwrap

REPO = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "sources", "note-ctakes")
SID = "note-ctakes"
BASE = "ctakes-examples/src/user/resources/org/apache/ctakes/examples/notes/"
WIDTH = 95
ANNOTATED = ["GenSurg_UmbilicalHernia_1", "ID000_clinic_demo.txt", "OBGYN_Gen_Abscess_1",
             "OBGYN_HysterectomyAndBSO_1", "OBGYN_IUD_1", "OBGYN_LaborProgressNote_1",
             "OBGYN_MVAPrego_1", "OBGYN_PROMCheck_1", "Peds_Dysphagia_1", "Peds_FebrileSez_1",
             "Peds_RoutBirthNote_1", "VascSurg_AAA_Leak_1", "VascSurg_FollowUp_1", "VascSurg_PVD_1",
             "VascSurg_RO_AAA_1", "VascSurg_RO_DVT_1"]
OTHER = [("apache_con/basic/Patient123/Patient123_31122019_NOTE.txt", "CLINICAL_NOTE"),
         ("apache_con/basic/Patient123/Patient123_31122018_PATH.txt", "PATHOLOGY_REPORT"),
         ("small/dr_nutritious_1.txt", "CLINICAL_NOTE")]


def show(path):
    return subprocess.run(["git", "--git-dir", REPO, "show", "HEAD:" + path],
                          capture_output=True, check=True).stdout.decode("utf-8", "replace")


def wrap(lines):
    out = []
    for line in lines:
        line = line.rstrip()
        if len(line) <= WIDTH:
            out.append(line)
            continue
        ind = len(line) - len(line.lstrip())
        sub = " " * (ind + (2 if line.lstrip()[:1] in "-*•" else 0))
        out.extend(textwrap.wrap(line, WIDTH, subsequent_indent=sub, break_on_hyphens=False))
    return out


def squeeze(lines):
    res = []
    for l in lines:
        if l == "" and (not res or res[-1] == ""):
            continue
        res.append(l)
    while res and res[-1] == "":
        res.pop()
    return res


def annotated(text):
    setting = specialty = ""
    body = []
    for l in text.splitlines():
        s = l.strip()
        if s.startswith("Case description for C-Takes"):
            continue
        if s.startswith("Note detail level") or s.startswith("Level of abbreviation"):
            continue
        if s.startswith("Setting:") and not setting:
            setting = s.split(":", 1)[1].strip().rstrip(".")
            continue
        if s.startswith("Specialty:") and not specialty:
            specialty = s.split(":", 1)[1].strip().rstrip(".")
            continue
        if re.match(r"\[(start|end) section|\[meta ", s):
            continue
        l = re.sub(r"\?(?=[A-Z][A-Za-z]*:)", "\n", l)
        body.extend(l.split("\n"))
    head = []
    if specialty:
        title = "%s %s NOTE" % (specialty.upper(), "INPATIENT" if setting.lower() == "inpatient" else "CLINIC")
        head = [title, "", "Setting: %s        Specialty: %s" % (setting, specialty), "-" * 60, ""]
    else:
        title = "CLINIC NOTE"
        head = [title, ""]
    return title, head + body


def other(text):
    out = []
    for l in text.splitlines():
        out.append(re.sub(r"^Text: ?", "", l))
    return None, out


def main():
    docs = []
    items = [("annotated/" + a, "CLINICAL_NOTE", annotated) for a in ANNOTATED]
    items += [(p, t, other) for p, t in OTHER]
    for path, typ, fn in items:
        title, lines = fn(show(BASE + path))
        lines = squeeze(wrap(lines))
        n = len(docs) + 1
        did = "%s-%d" % (SID, n)
        with open(os.path.join(OUT, did + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        docs.append((did, typ, BASE + path, title and lines[0], len(lines)))
    with open(os.path.join(OUT, "docs.toml"), "w", encoding="utf-8") as f:
        for did, typ, origin, title, _ in docs:
            f.write('[[doc]]\nid = "%s"\ntype = "%s"\nfile = "%s.txt"\norigin = "%s"\n' % (did, typ, did, origin))
            if title:
                f.write('title = "%s"\n' % title.replace('"', '\\"'))
            f.write("\n")
    for d in docs:
        print(d)


main()
