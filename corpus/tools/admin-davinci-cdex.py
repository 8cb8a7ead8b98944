"""admin-davinci-cdex: renders the Da Vinci Clinical Data Exchange (CDex) IG examples
(HL7/davinci-ecdx, CC0, input/examples-yaml/*.yml) as payer requests for patient information and claim
/ prior-authorization attachments, the providers' responses, attachment submission cover sheets and the
data-request questionnaires (blank and completed). Near-identical renderings are kept once.
usage: python3 admin-davinci-cdex.py <git-dir of HL7/davinci-ecdx> [out-folder]"""
# ---- minimal YAML subset reader (block mappings/sequences, plain/quoted/folded scalars) ----
import re

def _scalar(s):
    s = s.strip()
    if not s: return None
    if s[0] == "'" and s.endswith("'"): return s[1:-1].replace("''", "'")
    if s[0] == '"' and s.endswith('"'):
        return s[1:-1].replace(r'\"', '"')
    if s in ('true', 'false'): return s
    if s == '[]': return []
    if s == '{}': return {}
    return s

def _strip_comment(line):
    if '#' not in line: return line
    out = []; q = None
    for i, ch in enumerate(line):
        if q:
            if ch == q: q = None
        elif ch in '\'"' and (i == 0 or line[i-1] in ' :-['):
            q = ch
        elif ch == '#' and (i == 0 or line[i-1] == ' '):
            break
        out.append(ch)
    return ''.join(out)

def _prep(text):
    lines = []
    for raw in text.split('\n'):
        l = _strip_comment(raw).rstrip()
        if l.strip() == '' or l.strip() == '---': lines.append(None); continue
        lines.append(l)
    return lines

def yaml_load(text):
    lines = _prep(text)
    pos = [0]
    def ind(l): return len(l) - len(l.lstrip(' '))
    def peek():
        while pos[0] < len(lines) and lines[pos[0]] is None: pos[0] += 1
        return lines[pos[0]] if pos[0] < len(lines) else None
    def cont_scalar(first, base, folded=False):
        parts = [first] if first else []
        while True:
            save = pos[0]
            l = peek()
            if l is None or ind(l) <= base:
                pos[0] = save if l is None else pos[0]
                break
            parts.append(l.strip()); pos[0] += 1
        s = ' '.join(parts)
        return s
    def parse_block(base):
        l = peek()
        if l is None: return None
        if l.lstrip().startswith('- ') or l.strip() == '-':
            return parse_seq(ind(l))
        return parse_map(ind(l))
    def parse_value(rest, keyind):
        rest = rest.strip()
        if rest in ('>-', '>', '|', '|-', '>+', '|+'):
            return cont_scalar('', keyind)
        if rest == '':
            l = peek()
            if l is None: return None
            if ind(l) > keyind or (ind(l) == keyind and l.lstrip().startswith('- ')):
                return parse_block(keyind)
            return None
        if (rest[0] in '\'"') and not (len(rest) > 1 and rest.endswith(rest[0])):
            q = rest[0]; parts = [rest]
            while True:
                l = lines[pos[0]]; pos[0] += 1
                if l is None: parts.append(''); continue
                parts.append(l.strip())
                if l.rstrip().endswith(q): break
            return _scalar(' '.join(p for p in parts if p != ''))
        # plain multi-line continuation
        l = peek()
        if l is not None and ind(l) > keyind and not re.match(r'^\s*(- |[^\s:]+:(\s|$))', l):
            return _scalar(cont_scalar(rest, keyind))
        return _scalar(rest)
    def parse_map(base):
        d = {}
        while True:
            l = peek()
            if l is None or ind(l) < base: break
            if ind(l) > base: pos[0] += 1; continue
            s = l.strip()
            if s.startswith('- '): break
            m = re.match(r'^("[^"]*"|\'[^\']*\'|[^:]+):(\s+(.*))?$', s)
            if not m: pos[0] += 1; continue
            key = m.group(1).strip('"\''); pos[0] += 1
            d[key] = parse_value(m.group(3) or '', base)
        return d
    def parse_seq(base):
        out = []
        while True:
            l = peek()
            if l is None or ind(l) != base or not (l.lstrip().startswith('- ') or l.strip() == '-'): break
            s = l.strip()[1:].strip()
            if s == '':
                pos[0] += 1; out.append(parse_block(base)); continue
            m = re.match(r'^("[^"]*"|\'[^\']*\'|[^:\s][^:]*):(\s+(.*))?$', s)
            if m and not s.startswith(("'", '"')) or (m and s.startswith(("'", '"')) and s.index(':') > s.rindex(s[0])):
                # mapping item: rewrite line as a map at deeper indent
                newind = base + 2
                lines[pos[0]] = ' ' * newind + s
                out.append(parse_map(newind))
            else:
                pos[0] += 1
                out.append(parse_value(s, base))
        return out
    return parse_block(0)
# ---- end of YAML reader ----

import sys, os, json, subprocess, textwrap, difflib

SRC = 'admin-davinci-cdex'
POU = {'COVERAGE': 'coverage under policy or program', 'HQUALIMP': 'health quality improvement',
       'COC': 'coordination of care', 'TREAT': 'treatment', 'CLMATTCH': 'claim attachment',
       'COVAUTH': 'coverage authorization', 'HPAYMT': 'healthcare payment'}

def git_show(repo, path):
    return subprocess.run(['git', '--git-dir', repo, 'show', 'HEAD:' + path],
                          capture_output=True, text=True, check=True).stdout

def git_ls(repo):
    return subprocess.run(['git', '--git-dir', repo, 'ls-tree', '-r', '--name-only', 'HEAD'],
                          capture_output=True, text=True, check=True).stdout.split('\n')

def G(d, path, default=''):
    cur = d
    for p in path.split('.'):
        if isinstance(cur, list): cur = cur[0] if cur else None
        if not isinstance(cur, dict) or p not in cur or cur[p] in (None, '', []): return default
        cur = cur[p]
    if isinstance(cur, list) and cur and not isinstance(cur[0], (dict, list)): return cur[0]
    return cur

def L_(x):
    return x if isinstance(x, list) else ([] if x in (None, '') else [x])

def cc(c):
    if not isinstance(c, dict): return str(c or '')
    t = c.get('text'); cods = L_(c.get('coding'))
    disp = next((x.get('display') for x in cods if isinstance(x, dict) and x.get('display')), '')
    code = next((x.get('code') for x in cods if isinstance(x, dict) and x.get('code')), '')
    sysm = next((x.get('system') for x in cods if isinstance(x, dict) and x.get('system')), '')
    name = t or disp or code
    if code and 'loinc' in (sysm or '') and code not in name: name += f' (LOINC {code})'
    return name

def who(d, contained):
    if not isinstance(d, dict): return ''
    r = d.get('reference', '')
    if r.startswith('#'):
        c = contained.get(r[1:], {})
        if c.get('resourceType') == 'Patient':
            n = G(c, 'name'); nm = ' '.join(L_(G(n, 'given'))) + ' ' + G(n, 'family') if n else ''
            return nm.strip()
        if c.get('resourceType') == 'PractitionerRole':
            return f"Practitioner NPI {G(c,'practitioner.identifier.value')}, organization NPI {G(c,'organization.identifier.value')}"
    if r: return r.split('/')[-2] + ' ' + r.split('/')[-1].replace('cdex-example-', '') if '/' in r else r
    idf = d.get('identifier')
    if isinstance(idf, dict):
        lab = 'NPI' if 'npi' in idf.get('system', '') else cc(idf.get('type')) if idf.get('type') else 'ID'
        return f"{lab} {idf.get('value','')}"
    return d.get('display', '')

def patient_lines(t, contained):
    f = t.get('for', {}) or {}
    out = []
    r = f.get('reference', '')
    if r.startswith('#'):
        c = contained.get(r[1:], {})
        n = G(c, 'name')
        out.append(f"Patient: {' '.join(L_(G(n,'given')))} {G(n,'family')}".rstrip())
        if c.get('birthDate'): out.append(f"Date of birth: {c['birthDate']}")
        for i in L_(c.get('identifier')):
            out.append(f"{cc(i.get('type')) or 'Identifier'}: {i.get('value')}")
    elif r:
        out.append(f"Patient: {r.split('/')[-1]}")
    elif isinstance(f.get('identifier'), dict):
        out.append(f"{cc(f['identifier'].get('type')) or 'Member ID'}: {f['identifier'].get('value')}")
    return out

def render_task(t):
    contained = {c.get('id'): c for c in L_(t.get('contained')) if isinstance(c, dict)}
    code = G(t, 'code.coding.code') or cc(t.get('code'))
    st = t.get('status', '')
    attach = 'attachment' in code
    done = st in ('completed', 'failed')
    if attach:
        title = 'REQUEST FOR ADDITIONAL DOCUMENTATION (ATTACHMENT REQUEST)'
    else:
        title = 'REQUEST FOR PATIENT INFORMATION'
    if done: title = 'RESPONSE TO ' + title
    L = [title, '=' * len(title), '']
    L.append(f"From (requester): {who(t.get('requester'), contained)}")
    L.append(f"To (owner): {who(t.get('owner'), contained)}")
    L.append(f"Date: {str(t.get('authoredOn',''))[:10]}" + (f"    Last updated: {str(t.get('lastModified',''))[:10]}" if done else ''))
    for i in L_(t.get('identifier')):
        L.append(f"{cc(i.get('type')) or 'Reference'}: {i.get('value')}")
    L.append('')
    L += patient_lines(t, contained)
    rr = t.get('reasonReference')
    if isinstance(rr, dict) and isinstance(rr.get('identifier'), dict):
        L.append(f"RE: {cc(rr['identifier'].get('type')) or 'Claim'} {rr['identifier'].get('value')}"
                 + (f" ({cc(t.get('reasonCode'))})" if t.get('reasonCode') else ''))
    elif t.get('reasonCode'):
        L.append(f"RE: {cc(t.get('reasonCode'))}")
    L += ['', 'Information requested:']
    extra = []
    for inp in L_(t.get('input')):
        k = G(inp, 'type.coding.code')
        line_no = next((e.get('valueInteger') for e in L_(inp.get('extension')) if isinstance(e, dict) and 'paLineNumber' in e.get('url', '')), None)
        ln = f"  (claim/service line {line_no})" if line_no else ''
        if k == 'data-query': L.append(f"  [ ] Query: {inp.get('valueString')}")
        elif k in ('data-code', 'attachments-needed'): L.append(f"  [ ] {cc(inp.get('valueCodeableConcept'))}{ln}")
        elif k in ('questionnaire-context', 'data-request-questionnaire', 'questionnaire'):
            disp = G(inp, '_valueCanonical.extension.valueString') or inp.get('valueCanonical', '')
            L.append(f"  [ ] Complete the questionnaire: {disp}{ln}")
        elif k == 'purpose-of-use':
            c = G(inp, 'valueCodeableConcept.coding.code')
            extra.append(f"Purpose of use: {POU.get(c, c)} ({c})")
        elif k == 'signature-flag': extra.append('Signature required: ' + ('yes' if inp.get('valueBoolean') == 'true' else 'no'))
        elif k == 'payer-url': extra.append(f"Submit documentation to: {inp.get('valueUrl')}")
        elif k == 'service-date': extra.append(f"Date of service: {inp.get('valueDate')}")
        elif k == 'data-value' or k == '': pass
        else:
            v = inp.get('valueString') or inp.get('valueBoolean') or cc(inp.get('valueCodeableConcept')) or inp.get('valueUrl') or inp.get('valueCanonical')
            extra.append(f"{k}: {v}")
    L.append('')
    L += extra
    if G(t, 'restriction.period.end'): L.append(f"Please respond by: {G(t,'restriction.period.end')}")
    L.append(f"Request status: {st}" + (f"   ({G(t,'statusReason.text')})" if G(t, 'statusReason.text') else '')
             + (f"   Business status: {G(t,'businessStatus.text')}" if G(t, 'businessStatus.text') else ''))
    outs = L_(t.get('output'))
    if outs:
        L += ['', 'Information returned:']
        for o in outs:
            ref = G(o, 'valueReference.reference')
            c = contained.get(ref[1:], {}) if ref.startswith('#') else {}
            if c.get('resourceType') == 'Bundle':
                for e in L_(c.get('entry')):
                    L += describe(e.get('resource', {}))
            elif c:
                L += describe(c)
            elif ref:
                L.append(f"  - {ref}")
            elif o.get('valueCanonical') or o.get('valueString'):
                L.append(f"  - {o.get('valueCanonical') or o.get('valueString')}")
    if not done:
        L += ['', 'Provider signature: ___________________________   Date: ____________']
    return L

def describe(r):
    rt = r.get('resourceType')
    if rt == 'Condition':
        return [f"  - Condition: {cc(r.get('code'))}   status {G(r,'clinicalStatus.coding.code')}"
                + (f", onset {r.get('onsetDateTime')}" if r.get('onsetDateTime') else '')]
    if rt == 'DocumentReference':
        att = G(r, 'content.attachment')
        return [f"  - Document: {cc(r.get('type'))}, {str(r.get('date',''))[:10]} ({G(att,'contentType')}"
                + (f", '{G(att,'title')}'" if G(att, 'title') else '') + ')']
    if rt == 'Observation':
        return [f"  - Result: {cc(r.get('code'))}, {str(r.get('effectiveDateTime',''))[:10]}, status {r.get('status')}"]
    if rt == 'QuestionnaireResponse':
        return [f"  - Completed questionnaire ({r.get('questionnaire','')}), authored {r.get('authored','')}"]
    if rt == 'Provenance':
        return [f"  - Provenance record, recorded {r.get('recorded','')}"]
    return [f"  - {rt} {r.get('id','')}"]

def render_params(p):
    prm = L_(p.get('parameter'))
    def pv(name):
        for x in prm:
            if x.get('name') == name:
                v = x.get('valueIdentifier') or x.get('valueCode') or x.get('valueDateTime') or x.get('valueString')
                return v.get('value') if isinstance(v, dict) else v
        return ''
    attach_to = pv('AttachTo')
    L = ['ATTACHMENT SUBMISSION COVER SHEET', f"Attachments for: {attach_to}", '']
    rows = [('Tracking ID', pv('TrackingId')), ('Administrative reference no.', pv('AdminRefNumber')),
            ('Payer ID', pv('PayerId')), ('Submitting organization NPI', pv('OrganizationId')),
            ('Provider NPI', pv('ProviderId')), ('Member ID', pv('MemberId')),
            ('Date of service', str(pv('ServiceDate'))[:10]), ('Claim ID', pv('ClaimId')), ('Attach to', attach_to)]
    for a, b in rows:
        if b: L.append(f"{a + ':':<32}{b}")
    L += ['', 'ATTACHMENTS ENCLOSED', '-' * 70]
    n = 0
    for x in prm:
        if x.get('name') != 'Attachment': continue
        n += 1
        parts = L_(x.get('part'))
        lines = [q.get('valueString') for q in parts if q.get('name') == 'LineItem']
        code = next((cc(q.get('valueCodeableConcept')) for q in parts if q.get('name') == 'Code'), '')
        content = next((q.get('resource') for q in parts if q.get('name') == 'Content'), {}) or {}
        L.append(f"{n}. {code or content.get('resourceType','')}" + (f"   (line item(s) {', '.join(lines)})" if lines else ''))
        for d in describe(content): L.append('   ' + d.strip())
    L += ['', f"Total attachments: {n}", '',
          'Submitted by: ___________________________   Date: ____________']
    return L

def render_q(q):
    L = [str(q.get('title') or q.get('name')).upper(), '']
    if q.get('resourceType') == 'QuestionnaireResponse':
        L = ['COMPLETED QUESTIONNAIRE', f"Questionnaire: {q.get('questionnaire','')}", '']
        s = q.get('subject', {}) or {}
        L.append(f"Patient: {s.get('display','')}   {cc(G(s,'identifier.type'))} {G(s,'identifier.value')}")
        L.append(f"Authored: {q.get('authored','')}   Status: {q.get('status','')}   Author: {who(q.get('author'), {})}")
        L.append('')
    def walk(items, ind):
        for it in L_(items):
            if not isinstance(it, dict): continue
            txt = it.get('text', '')
            typ = it.get('type', '')
            if q.get('resourceType') == 'Questionnaire':
                req = ' *' if it.get('required') == 'true' else ''
                if typ == 'group':
                    L.append(''); L.append(' ' * ind + txt.upper())
                elif typ == 'choice':
                    L.extend(textwrap.wrap(f"{it.get('linkId')}. {txt}{req}", 93, initial_indent=' ' * ind, subsequent_indent=' ' * (ind + 4)))
                    for o in L_(it.get('answerOption')):
                        L.append(' ' * (ind + 4) + '[ ] ' + (G(o, 'valueCoding.display') or o.get('valueString', '')))
                elif typ == 'boolean':
                    L.append(' ' * ind + f"{it.get('linkId')}. {txt}{req}   [ ] Yes  [ ] No")
                elif typ == 'display':
                    L.extend(textwrap.wrap(txt, 93, initial_indent=' ' * ind, subsequent_indent=' ' * ind))
                else:
                    L.extend(textwrap.wrap(f"{it.get('linkId')}. {txt}{req}", 93, initial_indent=' ' * ind, subsequent_indent=' ' * (ind + 4)))
                    L.append(' ' * (ind + 4) + '_' * 50)
            else:
                ans = []
                for a in L_(it.get('answer')):
                    if not isinstance(a, dict): continue
                    for k, v in a.items():
                        if k.startswith('value'):
                            ans.append(G(v, 'display') or G(v, 'code') if isinstance(v, dict) else str(v))
                    if a.get('item'): walk(a.get('item'), ind + 2)
                if ans or txt:
                    L.extend(textwrap.wrap(f"{txt}: {'; '.join(x for x in ans if x)}", 93, initial_indent=' ' * ind, subsequent_indent=' ' * (ind + 4)))
            if it.get('item'): walk(it.get('item'), ind + 2)
    walk(q.get('item'), 0)
    if q.get('resourceType') == 'QuestionnaireResponse':
        sig = [e for e in L_(q.get('extension')) if isinstance(e, dict) and 'signature' in e.get('url', '')]
        if sig:
            s = sig[0].get('valueSignature', {})
            L += ['', f"Signed: {G(s,'type.display')} by {G(s,'who.display') or who(s.get('who'), {})} on {s.get('when','')}"]
    else:
        L += ['', 'Completed by: ___________________________   Date: ____________']
    return L

def main():
    repo = sys.argv[1]; out = sys.argv[2] if len(sys.argv) > 2 else 'corpus/sources/' + SRC
    base = 'input/examples-yaml/'
    files = sorted((p for p in git_ls(repo) if p.startswith(base) and p.endswith('.yml') and '/prepop' not in p
                    and 'inline' not in p), key=lambda p: (p.split('-example')[0], int(''.join(c for c in p.split('-example')[-1] if c.isdigit()) or 0)))
    docs = []
    for p in files:
        d = yaml_load(git_show(repo, p))
        if not isinstance(d, dict): continue
        rt = d.get('resourceType')
        if rt == 'Task': L = render_task(d)
        elif rt == 'Parameters' and any(x.get('name') == 'Attachment' for x in L_(d.get('parameter'))): L = render_params(d)
        elif rt in ('Questionnaire', 'QuestionnaireResponse'): L = render_q(d)
        else: continue
        lines = []
        for l in L:
            lines += (textwrap.wrap(l, 95, subsequent_indent='    ') or ['']) if len(l) > 95 else [l]
        txt = '\n'.join(x.rstrip() for x in lines).strip('\n') + '\n'
        # near-duplicate filter: keep the first of texts that are almost the same
        if any(difflib.SequenceMatcher(None, txt, o, autojunk=False).ratio() > 0.9 for o, _ in docs):
            continue
        docs.append((txt, p))
    toml = []
    for i, (txt, p) in enumerate(docs, 1):
        did = f'{SRC}-{i}'
        open(os.path.join(out, did + '.txt'), 'w').write(txt)
        toml.append(f'[[doc]]\nid = "{did}"\ntype = "ADMINISTRATIVE"\nfile = "{did}.txt"\n'
                    f'origin = "{p}"\ntitle = {json.dumps(txt.split(chr(10))[0])}\n')
    open(os.path.join(out, 'docs.toml'), 'w').write('\n'.join(toml))
    print(len(docs), 'docs')

if __name__ == '__main__':
    main()
