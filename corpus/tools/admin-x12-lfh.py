"""admin-x12-lfh: prints the X12 test transactions of LinuxForHealth/x12 (Apache-2.0,
src/tests/resources/) as the paper documents they stand for: 837P as a CMS-1500-style claim form,
837I as a UB-04-style claim, 835 as a remittance advice, 270/271 as an eligibility inquiry and
response, 276/277 as a claim status inquiry and response, 834 as a benefit enrollment form.
All names, identifiers, codes and amounts are the test files' own (fictional) values; only form
captions and code-qualifier labels are added.
usage: python3 admin-x12-lfh.py <git-dir of LinuxForHealth/x12> [out-folder]"""
import sys, os, json, subprocess, re

SRC = 'admin-x12-lfh'
W = 93

def git_show(repo, path):
    return subprocess.run(['git', '--git-dir', repo, 'show', 'HEAD:' + path],
                          capture_output=True, text=True, check=True).stdout

def git_ls(repo):
    return subprocess.run(['git', '--git-dir', repo, 'ls-tree', '-r', '--name-only', 'HEAD'],
                          capture_output=True, text=True, check=True).stdout.split('\n')

def segments(raw):
    raw = raw.strip()
    comp = raw[104] if len(raw) > 105 and raw.startswith('ISA') else ':'
    segs = []
    for s in raw.split('~'):
        s = s.strip()
        if not s: continue
        el = s.split('*')
        segs.append(el)
    return segs, comp

def e(seg, i):
    return seg[i] if len(seg) > i else ''

def d8(v):
    v = v or ''
    if re.fullmatch(r'\d{8}', v): return f'{v[4:6]}/{v[6:8]}/{v[0:4]}'
    if re.fullmatch(r'\d{6}', v): return f'{v[2:4]}/{v[4:6]}/{v[0:2]}'
    m = re.fullmatch(r'(\d{8})-(\d{8})', v)
    if m: return d8(m.group(1)) + ' - ' + d8(m.group(2))
    return v

def money(v):
    try: return '{:,.2f}'.format(float(v))
    except Exception: return v or ''

REL = {'18': 'Self', '01': 'Spouse', '19': 'Child', '20': 'Employee', '21': 'Unknown', '39': 'Organ donor',
       '53': 'Life partner', 'G8': 'Other relationship', '34': 'Other adult'}
FILING = {'CI': 'Commercial insurance', 'MB': 'Medicare Part B', 'MA': 'Medicare Part A', 'MC': 'Medicaid',
          'HM': 'HMO', 'BL': 'Blue Cross/Blue Shield', 'WC': "Workers' compensation", 'AM': 'Automobile medical',
          '12': 'PPO', '13': 'POS', '14': 'EPO', '16': 'HMO Medicare risk', 'CH': 'TRICARE', 'OF': 'Other federal',
          'LM': 'Liability medical', 'ZZ': 'Mutually defined', '11': 'Other non-federal', 'VA': 'Veterans affairs'}
GROUP = {'CO': 'Contractual obligation', 'PR': 'Patient responsibility', 'OA': 'Other adjustment',
         'PI': 'Payer initiated reduction', 'CR': 'Correction/reversal'}
NM1 = {'41': 'Submitter', '40': 'Receiver', '85': 'Billing provider', '87': 'Pay-to provider',
       'IL': 'Insured/subscriber', 'QC': 'Patient', 'PR': 'Payer', '82': 'Rendering provider',
       '77': 'Service facility', 'DN': 'Referring provider', '71': 'Attending physician',
       '72': 'Operating physician', 'ZZ': 'Other provider', 'DK': 'Ordering provider', 'PW': 'Pickup location',
       '45': 'Drop-off location', 'P3': 'Primary care provider', '1P': 'Provider', 'PE': 'Payee',
       'FA': 'Facility', 'DQ': 'Supervising provider', 'TT': 'Transfer to', 'P5': 'Plan sponsor',
       'IN': 'Insurer', '31': 'Mailing address', '36': 'Employer', '2B': 'Third-party administrator',
       'TV': 'Third-party administrator', 'PRP': 'Primary payer', 'GB': 'Other insured', 'GD': 'Guardian',
       '74': 'Corrected insured', 'S3': 'Custodial parent', 'DD': 'Assistant surgeon', 'QD': 'Responsible party'}
CLAIM_STATUS_835 = {'1': 'Processed as primary', '2': 'Processed as secondary', '3': 'Processed as tertiary',
                    '4': 'Denied', '19': 'Processed as primary, forwarded to additional payer(s)',
                    '20': 'Processed as secondary, forwarded', '22': 'Reversal of previous payment'}
EB = {'1': 'Active coverage', '6': 'Inactive', 'A': 'Co-insurance', 'B': 'Co-payment', 'C': 'Deductible',
      'L': 'Primary care provider', 'F': 'Limitations', 'G': 'Out of pocket (stop loss)', 'I': 'Non-covered',
      'X': 'Health care facility', 'N': 'Services restricted to following provider', 'R': 'Other or additional payor',
      'E': 'Exclusions', 'D': 'Benefit description', 'U': 'Contact following entity for eligibility or benefit information',
      'W': 'Other source of data', 'Y': 'Spend down', 'CB': 'Coverage basis', 'MC': 'Managed care coordinator'}
SERVICE_TYPE = {'1': 'Medical care', '30': 'Health benefit plan coverage', '33': 'Chiropractic',
                '35': 'Dental care', '47': 'Hospital', '86': 'Emergency services', '88': 'Pharmacy',
                '98': 'Professional (physician) visit - office', 'AL': 'Vision (optometry)', 'MH': 'Mental health',
                'UC': 'Urgent care', '48': 'Hospital - inpatient', '50': 'Hospital - outpatient',
                'BZ': 'Physician visit - office: well', '4': 'Diagnostic X-ray', '5': 'Diagnostic lab',
                'A7': 'Psychiatric - inpatient', 'A8': 'Psychiatric - outpatient'}
TIME = {'27': 'Visit', '22': 'Service year', '23': 'Calendar year', '29': 'Remaining', '7': 'Day', '6': 'Hour',
        '24': 'Year to date', '25': 'Contract', '26': 'Episode', '32': 'Lifetime'}

def name_of(seg):
    if e(seg, 2) == '1':
        nm = f"{e(seg,3)}, {e(seg,4)}" + (f" {e(seg,5)}" if e(seg, 5) else '')
        if e(seg, 7): nm += ' ' + e(seg, 7)
    else:
        nm = e(seg, 3)
    return nm.strip(', ')

class Ent:
    def __init__(self, seg):
        self.code = e(seg, 1); self.name = name_of(seg); self.idq = e(seg, 8); self.id = e(seg, 9)
        self.addr = []; self.refs = []; self.dmg = None; self.per = []
    def block(self, label=None, ind='  '):
        out = [f"{label or NM1.get(self.code, self.code)}: {self.name or '(not named)'}"]
        for a in self.addr: out.append(ind + a)
        if self.id: out.append(ind + f"ID ({self.idq}): {self.id}")
        for q, v in self.refs: out.append(ind + f"Ref {q}: {v}")
        if self.dmg: out.append(ind + f"Date of birth: {d8(self.dmg[0])}   Sex: {self.dmg[1] or '-'}")
        for p in self.per: out.append(ind + p)
        return out

def attach(cur, s):
    if cur is None: return
    t = s[0]
    if t == 'N3': cur.addr.append(' '.join(x for x in s[1:] if x))
    elif t == 'N4':
        z = e(s, 3)
        cur.addr.append(f"{e(s,1)}, {e(s,2)} {z}".strip())
    elif t == 'REF': cur.refs.append((e(s, 1), e(s, 2)))
    elif t == 'DMG': cur.dmg = (e(s, 2), e(s, 3))
    elif t == 'PER':
        parts = [e(s, 2)] + [f"{e(s,i)} {e(s,i+1)}" for i in (3, 5, 7) if e(s, i)]
        cur.per.append('Contact: ' + ', '.join(p for p in parts if p))

def two_col(left, right, w=46):
    out = []
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ''
        b = right[i] if i < len(right) else ''
        out.append((a[:w - 1].ljust(w) + b).rstrip())
    return out

# ---------------- 837 ----------------
def parse_837(segs, comp):
    """returns header entities and list of claims with context"""
    head = {}; provider = {}; sub = {}; pat = {}; claims = []; cur = None; claim = None; line = None
    level = None; sbr = None; pat_rel = None; other = []
    for s in segs:
        t = s[0]
        if t == 'HL':
            level = e(s, 3); claim = None; line = None
            if level == '20': provider = {}
            if level == '22': sub = {}; pat = {}; pat_rel = None; other = []
            if level == '23': pat = {}
            cur = None; continue
        if t == 'SBR':
            if claim is None: sbr = s
            else: claim['other_sbr'].append(s); other.append(s)
            continue
        if t == 'PAT': pat_rel = e(s, 1); continue
        if t == 'PRV':
            (claim if claim else provider).setdefault('prv', []).append(f"{e(s,1)} taxonomy {e(s,3)}"); continue
        if t == 'NM1':
            ent = Ent(s); cur = ent
            if claim is not None:
                if line is not None: line['ents'].append(ent)
                else: claim['ents'].append(ent)
            elif level is None: head[ent.code] = ent
            elif level == '20': provider[ent.code] = ent
            elif level == '22': sub[ent.code] = ent
            elif level == '23': pat[ent.code] = ent
            continue
        if t in ('N3', 'N4', 'DMG', 'PER') or (t == 'REF' and line is None and (cur is not None and (claim is None or cur in claim['ents']))):
            if t == 'REF' and claim is not None and cur is None:
                claim['refs'].append((e(s, 1), e(s, 2))); continue
            attach(cur, s); continue
        if t == 'CLM':
            comps = e(s, 5).split(comp)
            claim = dict(id=e(s, 1), total=e(s, 2), pos=comps, clm=s, dtp=[], hi=[], lines=[], ents=[], refs=[],
                         ntes=[], other_sbr=[], provider=dict(provider), sub=dict(sub), pat=dict(pat),
                         sbr=sbr, pat_rel=pat_rel, extra=[])
            claims.append(claim); cur = None; line = None; continue
        if claim is None: continue
        if t == 'DTP':
            (line['dtp'] if line else claim['dtp']).append((e(s, 1), d8(e(s, 3)))); continue
        if t == 'HI':
            for x in s[1:]:
                if x: claim['hi'].append(x.split(comp))
            continue
        if t == 'LX':
            line = dict(n=e(s, 1), sv=None, dtp=[], ents=[], refs=[], extra=[]); claim['lines'].append(line); cur = None; continue
        if t in ('SV1', 'SV2', 'SV3', 'SV4', 'SV5'):
            line['sv'] = s; continue
        if t == 'REF':
            (line['refs'] if line else claim['refs']).append((e(s, 1), e(s, 2))); continue
        if t == 'NTE':
            (line['extra'] if line else claim['ntes']).append(f"Note ({e(s,1)}): {e(s,2)}"); continue
        if t == 'AMT': (line['extra'] if line else claim['extra']).append(f"Amount {e(s,1)}: {money(e(s,2))}"); continue
        if t == 'QTY': (line['extra'] if line else claim['extra']).append(f"Quantity {e(s,1)}: {e(s,2)}"); continue
        if t in ('CR1', 'CRC', 'CL1', 'CN1', 'HCP', 'OI', 'MOA', 'MIA', 'PWK', 'K3', 'CR2', 'CR3', 'CTP', 'LIN', 'SVD', 'CAS', 'HSD'):
            txt = f"{SEGNAME.get(t, t)}: " + ' '.join(x.replace(comp, ' ') for x in s[1:] if x)
            (line['extra'] if line else claim['extra']).append(txt); continue
    return head, claims

DTP837 = {'431': 'Onset of current illness', '434': 'Statement dates', '435': 'Admission date/hour',
          '096': 'Discharge hour', '472': 'Service date', '439': 'Accident date', '454': 'Initial treatment',
          '304': 'Latest visit', '453': 'Acute manifestation', '438': 'Last menstrual period',
          '484': 'Last X-ray', '455': 'Last X-ray', '471': 'Prescription date', '573': 'Date claim paid',
          '090': 'Report start', '091': 'Report end', '297': 'Initial disability', '360': 'Disability from',
          '361': 'Disability to', '314': 'Disability', '296': 'Return to work', '050': 'Received',
          '461': 'Last certification', '463': 'Begin therapy', '738': 'Most recent hemoglobin'}

SEGNAME = {'LIN': 'Drug identification', 'CTP': 'Drug quantity', 'CL1': 'Institutional claim code',
           'OI': 'Other insurance coverage information', 'CR1': 'Ambulance transport information',
           'CRC': 'Certification condition indicator', 'HCP': 'Repricing information', 'MOA': 'Outpatient adjudication',
           'MIA': 'Inpatient adjudication', 'CAS': 'Claim adjustment', 'PWK': 'Claim supplemental information (paperwork)',
           'K3': 'File information', 'CN1': 'Contract information', 'CR2': 'Spinal manipulation information',
           'CR3': 'Durable medical equipment certification', 'SVD': 'Line adjudication information',
           'HSD': 'Health care services delivery'}

def dx_list(claim):
    out = []
    for h in claim['hi']:
        q = h[0]; c = h[1] if len(h) > 1 else ''
        if len(c) > 3 and '.' not in c and re.match(r'[A-Z0-9]', c) and q in ('BK', 'BF', 'ABK', 'ABF', 'BJ', 'ABJ', 'PR', 'APR', 'BN', 'ABN'):
            c = c[:3] + '.' + c[3:]
        if (q, c, h[2:]) not in out: out.append((q, c, h[2:]))
    return out

def render_837p(head, claims, fname):
    L = []
    for k, c in enumerate(claims):
        if k: L.append('\f')
        sub = c['sub']; pat = c['pat'] or {}; prov = c['provider']
        ins = sub.get('IL'); payer = sub.get('PR'); patient = pat.get('QC') or ins
        sbr = c['sbr'] or []
        L += ['HEALTH INSURANCE CLAIM FORM', 'Professional claim (837P)                         ' +
              f"Carrier: {payer.name if payer else ''}"]
        if payer and payer.addr: L.append(' ' * 50 + '         ' + ', '.join(payer.addr))
        L.append('-' * W)
        L.append(f"1.  Claim filing: {FILING.get(e(sbr,9), e(sbr,9))}".ljust(50) + f"1a. Insured's ID number: {ins.id if ins else ''}")
        L.append(f"2.  Patient's name: {patient.name if patient else ''}".ljust(50) +
                 f"3.  Birth date: {d8(patient.dmg[0]) if patient and patient.dmg else ''}  Sex: {patient.dmg[1] if patient and patient.dmg else ''}")
        L.append(f"4.  Insured's name: {ins.name if ins else ''}")
        pa = patient.addr if patient else []
        ia = ins.addr if ins else []
        L.append(f"5.  Patient's address: {', '.join(pa)}")
        rel = c['pat_rel'] if c['pat_rel'] else e(sbr, 2)
        L.append(f"6.  Patient relationship to insured: {REL.get(rel, rel)}")
        L.append(f"7.  Insured's address: {', '.join(ia)}")
        L.append(f"11.  Insured's policy group or FECA number: {e(sbr,3)}" + (f"   Plan name: {e(sbr,4)}" if e(sbr, 4) else ''))
        osbr = c['other_sbr']
        if osbr:
            L.append(f"11d. Is there another health benefit plan? YES  ({', '.join(FILING.get(e(x,9), e(x,9)) + ' ' + e(x,3) for x in osbr)})")
        others = [x for x in c['ents'] if x.code in ('IL', 'PR')]
        if others:
            L.append(f"9.  Other insured / plan: " + '; '.join(f"{x.name} ({x.id})" for x in others))
        clm = c['clm']
        L.append(f"12. Patient's signature on file: {e(clm,9) or ''}".ljust(50) + f"13. Insured's signature (assignment): {e(clm,8)}")
        acc = [ (e(clm,11).split(':')) ] if e(clm, 11) else []
        if acc: L.append(f"10. Condition related to: {', '.join(x for x in acc[0] if x)}" + (f"  (state {e(clm,11).split(':')[3]})" if len(e(clm,11).split(':')) > 3 else ''))
        for q, dt in c['dtp']:
            L.append(f"    {DTP837.get(q, 'Date ' + q)}: {dt}")
        for ent in c['ents']:
            if ent.code in ('DN', 'DK', 'P3'):
                L.append(f"17. Name of referring provider: {ent.name}   ({ent.idq} {ent.id})")
        for q, v in c['refs']:
            lab = {'D9': 'Clearinghouse trace no.', 'G1': 'Prior authorization no.', '9F': 'Referral no.',
                   'F8': 'Original reference no.', 'EA': 'Medical record no.', 'X4': 'CLIA no.'}.get(q, 'Ref ' + q)
            L.append(f"    {lab}: {v}")
        for x in c['extra'] + c['ntes']:
            L += [x2 for x2 in wrap_(f"19. {x}", W)]
        dx = dx_list(c)
        L.append('21. Diagnosis or nature of illness or injury (ICD ind. ' + ('0' if dx and dx[0][0].startswith('A') else '9') + ')')
        letters = 'ABCDEFGHIJKL'
        row = ''
        for i, (q, cd, _) in enumerate(dx[:12]):
            cell = f"{letters[i]}. {cd}"
            row += cell.ljust(16)
            if (i + 1) % 4 == 0: L.append('    ' + row.rstrip()); row = ''
        if row: L.append('    ' + row.rstrip())
        L.append('-' * W)
        L.append('24. A. Date(s) of service     B.POS  D. Procedure / modifier    E.Dx ptr  F. Charges  G.Units')
        for ln in c['lines']:
            sv = ln['sv'] or []
            pc = e(sv, 1).split(':')
            proc = pc[1] if len(pc) > 1 else e(sv, 1)
            mods = ' '.join(pc[2:])
            dates = ', '.join(dt for q, dt in ln['dtp'] if q == '472') or ''
            pos = e(sv, 5) or (c['pos'][0] if c['pos'] else '')
            ptr = e(sv, 7).replace(':', ',')
            L.append(f"{ln['n']:>3} {dates:<25} {pos:<4}  {(proc + ' ' + mods).strip():<26} {ptr:<8} {money(e(sv,2)):>10}  {e(sv,4)}")
            for ent in ln['ents']:
                L.append(f"      {NM1.get(ent.code, ent.code)}: {ent.name} {ent.id}")
            for q, v in ln['refs']:
                L.append(f"      Ref {q}: {v}")
            for x in ln['extra']:
                L += wrap_('      ' + x, W)
        L.append('-' * W)
        bp = prov.get('85')
        tax = [v for q, v in (bp.refs if bp else []) if q in ('EI', 'SY')]
        L.append(f"25. Federal tax ID number: {tax[0] if tax else (bp.id if bp and bp.idq == '24' else '')}".ljust(50) +
                 f"26. Patient's account no.: {c['id']}")
        L.append(f"27. Accept assignment: {e(clm,7)}".ljust(50) + f"28. Total charge: ${money(c['total'])}")
        rend = [x for x in c['ents'] if x.code == '82']
        L.append(f"31. Signature of physician or supplier: {rend[0].name if rend else (bp.name if bp else '')}")
        fac = [x for x in c['ents'] if x.code in ('77', 'FA')]
        if fac:
            L.append(f"32. Service facility location: {fac[0].name} {', '.join(fac[0].addr)}")
        amb = [x for x in c['ents'] if x.code in ('PW', '45')]
        for x in amb:
            L.append(f"    {NM1[x.code]}: {', '.join(x.addr)}")
        if bp:
            L.append(f"33. Billing provider info & ph #: {bp.name}")
            L.append(f"    {', '.join(bp.addr)}    NPI/ID ({bp.idq}): {bp.id}")
        for p in prov.get('prv', []): L.append(f"    Provider taxonomy: {p}")
        sbm = head.get('41')
        if sbm:
            L.append(f"    Submitted by: {sbm.name} ({sbm.id}) {' '.join(sbm.per)}")
    return L

def wrap_(s, w):
    import textwrap
    ind = len(s) - len(s.lstrip())
    return textwrap.wrap(s, w, subsequent_indent=' ' * (ind + 2)) or ['']

def render_837i(head, claims, fname):
    L = []
    for k, c in enumerate(claims):
        if k: L.append('\f')
        sub = c['sub']; pat = c['pat'] or {}; prov = c['provider']
        ins = sub.get('IL'); payer = sub.get('PR'); patient = pat.get('QC') or ins
        bp = prov.get('85'); sbr = c['sbr'] or []; clm = c['clm']
        L += ['UNIFORM BILL - INSTITUTIONAL CLAIM (UB-04 / 837I)', '=' * W]
        left = ['1. ' + (bp.name if bp else '')] + ['   ' + a for a in (bp.addr if bp else [])]
        tax = [v for q, v in (bp.refs if bp else []) if q == 'EI']
        pos = c['pos']
        tob = (pos[0] if pos else '') + (pos[2] if len(pos) > 2 else '')
        right = [f"3a. Pat. control no.: {c['id']}", f"4. Type of bill: 0{tob}" if tob else '4. Type of bill:',
                 f"5. Fed. tax no.: {tax[0] if tax else ''}"]
        st = [dt for q, dt in c['dtp'] if q == '434']
        if st: right.append(f"6. Statement covers period: {st[0]}")
        L += two_col(left, right)
        L.append('')
        L.append(f"8. Patient name: {patient.name if patient else ''}".ljust(46) +
                 f"10. Birth date: {d8(patient.dmg[0]) if patient and patient.dmg else ''}   11. Sex: {patient.dmg[1] if patient and patient.dmg else ''}")
        L.append(f"9. Patient address: {', '.join(patient.addr if patient else [])}")
        for q, dt in c['dtp']:
            if q != '434': L.append(f"   {DTP837.get(q, 'Date ' + q)}: {dt}")
        for x in c['extra']:
            L += wrap_('   ' + x, W)
        codes = {'BH': 'Occurrence', 'BI': 'Occurrence span', 'BE': 'Value', 'BG': 'Condition', 'BK': 'Principal dx',
                 'ABK': 'Principal dx', 'BF': 'Other dx', 'ABF': 'Other dx', 'BJ': 'Admitting dx', 'ABJ': 'Admitting dx',
                 'BR': 'Principal procedure', 'BBR': 'Principal procedure', 'BQ': 'Other procedure', 'BBQ': 'Other procedure',
                 'BN': 'External cause of injury', 'ABN': 'External cause of injury', 'PR': "Patient's reason for visit", 'APR': "Patient's reason for visit", 'DR': 'DRG', 'BP': 'HCPCS', 'BO': 'Other HCPCS'}
        occ = [(q, cd, rest) for q, cd, rest in dx_list(c) if q in ('BH', 'BI', 'BE', 'BG')]
        if occ:
            L.append('')
            for q, cd, rest in occ:
                extra = ' '.join(x for x in rest if x and x not in ('D8', 'RD8'))
                L.append(f"   {codes[q]} code {cd}  {d8(extra) if re.fullmatch(r'[0-9-]+', extra or '') else extra}".rstrip())
        L += ['', '42 Rev.  43/44 HCPCS / description      45 Serv. date    46 Units   47 Total charges  48 Non-cov']
        tot = 0.0
        for ln in c['lines']:
            sv = ln['sv'] or []
            pc = e(sv, 2).split(':')
            proc = ' '.join(pc[1:]) if len(pc) > 1 else e(sv, 2)
            dates = ', '.join(dt for q, dt in ln['dtp'] if q == '472')
            L.append(f"{e(sv,1):<8}{proc:<31}{dates:<17}{e(sv,5):>6}   {money(e(sv,3)):>14}   {money(e(sv,7)) if e(sv,7) else ''}")
            for x in ln['extra'] + [f"Ref {q}: {v}" for q, v in ln['refs']]:
                L += wrap_('        ' + x, W)
        L.append(f"0001    TOTAL{'':<62}{money(c['total']):>10}")
        L.append('')
        pl = [f"50. Payer name: {payer.name if payer else ''}  ({payer.id if payer else ''})  {FILING.get(e(sbr,9), e(sbr,9))}"]
        for x in c['other_sbr']:
            pl.append(f"    Other payer filing: {FILING.get(e(x,9), e(x,9))}  group {e(x,3)} {e(x,4)}")
        for x in c['ents']:
            if x.code == 'PR': pl.append(f"    Other payer: {x.name} ({x.id})")
        L += pl
        L.append(f"51. Health plan ID: {payer.id if payer else ''}".ljust(46) + f"52. Rel. info: {e(clm,9)}   53. Asg. ben.: {e(clm,8)}")
        L.append(f"58. Insured's name: {ins.name if ins else ''}".ljust(46) + f"59. P. rel: {REL.get(e(sbr,2), e(sbr,2))}")
        L.append(f"60. Insured's unique ID: {ins.id if ins else ''}".ljust(46) + f"62. Group no.: {e(sbr,3)} {e(sbr,4)}".rstrip())
        for x in c['ents']:
            if x.code == 'IL': L.append(f"    Other insured: {x.name}  ID {x.id}")
        for q, v in c['refs']:
            L.append(f"63. Treatment authorization / ref ({q}): {v}")
        dx = [(q, cd) for q, cd, rest in dx_list(c) if q not in ('BH', 'BI', 'BE', 'BG')]
        L.append('')
        for q, cd in dx:
            L.append(f"   {codes.get(q, q)}: {cd}")
        for x in c['ents']:
            if x.code in ('71', '72', 'ZZ', 'DN', '82'):
                L.append(f"76. {NM1.get(x.code)}: {x.name}  {x.idq} {x.id} " + ' '.join(f"{q} {v}" for q, v in x.refs))
        for p in prov.get('prv', []): L.append(f"81. Taxonomy: {p}")
        if bp: L.append(f"56. NPI: {bp.id}")
        sbm = head.get('41')
        if sbm: L.append(f"    Submitter: {sbm.name} {' '.join(sbm.per)}")
        if ins and ins.addr: L.append(f"    Insured address: {', '.join(ins.addr)}")
    return L

# ---------------- 835 ----------------
def render_835(segs, comp, fname):
    L = ['HEALTH CARE CLAIM PAYMENT / REMITTANCE ADVICE', '=' * W]
    ents = {}; cur = None; claims = []; claim = None; svc = None; bpr = trn = None; dtm = []; plb = []; ts = []
    for s in segs:
        t = s[0]
        if t == 'BPR': bpr = s
        elif t == 'TRN': trn = s
        elif t == 'DTM' and claim is None: dtm.append(s)
        elif t == 'N1':
            cur = Ent(['NM1', e(s, 1), '2', e(s, 2), '', '', '', '', e(s, 3), e(s, 4)]); ents[e(s, 1)] = cur
        elif t in ('N3', 'N4', 'PER') and claim is None: attach(cur, s)
        elif t == 'REF' and claim is None: attach(cur, s)
        elif t in ('TS3', 'TS2'): ts.append(s)
        elif t == 'CLP':
            claim = dict(clp=s, cas=[], ents=[], svcs=[], dtm=[], misc=[]); claims.append(claim); svc = None
        elif t == 'CAS' and claim is not None:
            grp = e(s, 1); adj = []
            for i in range(2, len(s), 3):
                if e(s, i): adj.append(f"{grp}-{e(s,i)} {money(e(s,i+1))}")
            (svc['cas'] if svc else claim['cas']).extend(adj)
        elif t == 'NM1' and claim is not None: claim['ents'].append(Ent(s))
        elif t == 'SVC' and claim is not None:
            svc = dict(svc=s, dtm=[], cas=[], misc=[]); claim['svcs'].append(svc)
        elif t == 'DTM' and claim is not None:
            (svc['dtm'] if svc else claim['dtm']).append((e(s, 1), d8(e(s, 2))))
        elif t in ('MIA', 'MOA', 'QTY', 'AMT', 'REF', 'LQ') and claim is not None:
            (svc['misc'] if svc else claim['misc']).append(f"{t} " + ' '.join(x for x in s[1:] if x))
        elif t == 'PLB': plb.append(s)
    payer = ents.get('PR'); payee = ents.get('PE')
    left = (payer.block('Payer') if payer else [])
    right = (payee.block('Payee') if payee else [])
    L += two_col(left, right)
    L.append('')
    if bpr:
        L.append(f"Total payment amount: ${money(e(bpr,2))}    Credit/debit: {e(bpr,3)}    Payment method: {e(bpr,4)}"
                 + (f" ({e(bpr,5)})" if e(bpr, 5) else ''))
        L.append(f"Payment/effective date: {d8(e(bpr,16))}" + (f"    Trace (check/EFT) number: {e(trn,2)}" if trn else ''))
        if e(bpr, 9): L.append(f"Payer account: {e(bpr,7)} {e(bpr,9)}    Payee account: {e(bpr,13)} {e(bpr,15)}")
    for s in dtm:
        L.append(f"Production date: {d8(e(s,2))}" if e(s, 1) == '405' else f"Date ({e(s,1)}): {d8(e(s,2))}")
    for s in ts:
        if s[0] == 'TS3':
            L.append(f"Provider summary: provider {e(s,1)}, facility type {e(s,2)}, fiscal period end {d8(e(s,3))}, "
                     f"{e(s,4)} claim(s), total charges {money(e(s,5))}")
        else:
            L.append('Provider supplemental summary: ' + ', '.join(money(x) for x in s[1:] if x))
    L += ['', 'CLAIM DETAIL', '-' * W]
    for c in claims:
        clp = c['clp']
        pt = [x for x in c['ents'] if x.code == 'QC']
        L.append(f"Patient: {pt[0].name if pt else ''}   ID ({pt[0].idq if pt else ''}): {pt[0].id if pt else ''}")
        L.append(f"  Patient control no.: {e(clp,1)}   Status: {CLAIM_STATUS_835.get(e(clp,2), e(clp,2))}   "
                 f"Payer claim control no.: {e(clp,7)}")
        L.append(f"  Billed: {money(e(clp,3))}   Paid: {money(e(clp,4))}   Patient responsibility: {money(e(clp,5)) or '0.00'}"
                 + (f"   Filing code: {FILING.get(e(clp,6), e(clp,6))}" if e(clp, 6) else '')
                 + (f"   Facility type: {e(clp,8)}" if e(clp, 8) else ''))
        for x in c['ents']:
            if x.code != 'QC': L.append(f"  {NM1.get(x.code, x.code)}: {x.name} {x.idq} {x.id}".rstrip())
        for q, dt in c['dtm']:
            lab = {'232': 'Claim statement period start', '233': 'Claim statement period end', '050': 'Received',
                   '036': 'Coverage expiration'}.get(q, 'Date ' + q)
            L.append(f"  {lab}: {dt}")
        if c['cas']:
            L += wrap_('  Claim adjustments: ' + '; '.join(f"{x} ({GROUP.get(x.split('-')[0], '')})" for x in c['cas']), W)
        for m in c['misc']: L.append('  ' + m)
        if c['svcs']:
            L.append('    Service         Dates                      Billed      Paid   Adjustments')
            for sv in c['svcs']:
                s = sv['svc']
                dts = ' - '.join(dt for q, dt in sv['dtm'])
                L += wrap_(f"    {e(s,1).replace(':',' '):<15} {dts:<24} {money(e(s,2)):>9} {money(e(s,3)):>9}   {', '.join(sv['cas'])}", W)
                for m in sv['misc']: L.append('      ' + m)
        L.append('')
    for s in plb:
        L.append(f"Provider adjustment: provider {e(s,1)}, fiscal period {d8(e(s,2))}, reason {e(s,3)}, amount {money(e(s,4))}")
    return L

# ---------------- 270/271, 276/277 ----------------
def render_27x(segs, comp, fname, kind):
    titles = {'270': 'ELIGIBILITY, COVERAGE OR BENEFIT INQUIRY', '271': 'ELIGIBILITY, COVERAGE OR BENEFIT INFORMATION',
              '276': 'CLAIM STATUS REQUEST', '277': 'CLAIM STATUS RESPONSE'}
    L = [titles[kind], '=' * W]
    levels = {'20': 'INFORMATION SOURCE', '21': 'INFORMATION RECEIVER', '19': 'SERVICE PROVIDER',
              '22': 'SUBSCRIBER', '23': 'DEPENDENT'}
    cur = None; ind = ''
    for s in segs:
        t = s[0]
        if t == 'BHT':
            L.append(f"Reference: {e(s,3)}    Date: {d8(e(s,4))}  Time: {e(s,5)}    Purpose: {'original' if e(s,2)=='13' else 'response' if e(s,2)=='11' else e(s,2)}")
        elif t == 'HL':
            lv = e(s, 3); ind = '  ' * (int(e(s, 1)) and min(len([1 for _ in range(1)]), 1))
            L += ['', levels.get(lv, 'LEVEL ' + lv)]; cur = None
        elif t == 'NM1':
            cur = Ent(s); L.append(f"  {NM1.get(cur.code, cur.code)}: {cur.name}" + (f"   ID ({cur.idq}): {cur.id}" if cur.id else ''))
        elif t in ('N3', 'N4'):
            L.append('    ' + (' '.join(x for x in s[1:] if x) if t == 'N3' else f"{e(s,1)}, {e(s,2)} {e(s,3)}"))
        elif t == 'DMG':
            L.append(f"    Date of birth: {d8(e(s,2))}" + (f"   Sex: {e(s,3)}" if e(s, 3) else ''))
        elif t == 'TRN':
            L.append(f"  Trace number: {e(s,2)}" + (f"   (originator {e(s,3)})" if e(s, 3) else ''))
        elif t == 'REF':
            lab = {'BLT': 'Bill type', 'EJ': 'Patient account no.', '1K': 'Payer claim control no.', '6P': 'Group number',
                   '18': 'Plan number', '1L': 'Group/policy no.', '0F': 'Subscriber number', 'SY': 'SSN', 'D9': 'Clearinghouse trace',
                   'EA': 'Medical record no.', '1W': 'Member ID', 'F8': 'Original reference', '17': 'Client reporting category'}.get(e(s, 1), 'Reference ' + e(s, 1))
            L.append(f"    {lab}: {e(s,2)}" + (f" {e(s,3)}" if e(s, 3) else ''))
        elif t == 'AMT':
            L.append(f"    {'Total claim charge' if e(s,1)=='T3' else 'Amount ' + e(s,1)}: {money(e(s,2))}")
        elif t == 'DTP':
            lab = {'472': 'Service date(s)', '291': 'Plan date', '346': 'Plan begin', '347': 'Plan end', '307': 'Eligibility',
                   '356': 'Eligibility begin', '357': 'Eligibility end', '348': 'Benefit begin', '349': 'Benefit end'}.get(e(s, 1), 'Date ' + e(s, 1))
            L.append(f"    {lab}: {d8(e(s,3))}")
        elif t == 'EQ':
            codes = e(s, 1).split('^')
            L.append(f"  Eligibility/benefit inquiry for: " + ', '.join(f"{c} {SERVICE_TYPE.get(c, '')}".strip() for c in codes))
        elif t == 'EB':
            codes = [c for c in e(s, 3).split('^') if c]
            parts = [EB.get(e(s, 1), e(s, 1))]
            if e(s, 2): parts.append('coverage level ' + e(s, 2))
            if codes: parts.append('services: ' + ', '.join(f"{c} {SERVICE_TYPE.get(c, '')}".strip() for c in codes))
            if e(s, 4): parts.append('insurance type ' + e(s, 4))
            if e(s, 5): parts.append('plan: ' + e(s, 5))
            if e(s, 6): parts.append('period: ' + TIME.get(e(s, 6), e(s, 6)))
            if e(s, 7): parts.append('amount: $' + money(e(s, 7)))
            if e(s, 8): parts.append('percent: ' + e(s, 8))
            if e(s, 12): parts.append('in plan network: ' + e(s, 12))
            L += wrap_('  Benefit: ' + '; '.join(parts), W)
        elif t == 'AAA':
            L.append(f"  REQUEST REJECTED: valid request {e(s,1)}, reject reason code {e(s,3)}, follow-up action {e(s,4)}")
        elif t == 'STC':
            cat = e(s, 1).split(comp)
            L.append(f"  Status: category {cat[0]}, status code {cat[1] if len(cat) > 1 else ''}"
                     + (f", entity {cat[2]}" if len(cat) > 2 else '') + f"   effective {d8(e(s,2))}"
                     + (f"   charge {money(e(s,4))}" if e(s, 4) else '') + (f"   paid {money(e(s,5))}" if e(s, 5) else ''))
        elif t == 'SVC':
            L.append(f"  Service line: {e(s,1).replace(comp, ' ')}   charge {money(e(s,2))}" + (f"   paid {money(e(s,3))}" if e(s, 3) else '')
                     + (f"   units {e(s,7)}" if e(s, 7) else ''))
        elif t == 'PER':
            L.append('    Contact: ' + ', '.join(x for x in s[2:] if x))
        elif t in ('LS', 'LE', 'MSG'):
            if t == 'MSG': L += wrap_('    Message: ' + e(s, 1), W)
        elif t == 'INS':
            L.append(f"    Subscriber indicator: {e(s,1)}   Relationship: {REL.get(e(s,2), e(s,2))}")
        elif t == 'HSD':
            L.append('    Delivery: ' + ' '.join(x for x in s[1:] if x))
    return L

# ---------------- 834 ----------------
def render_834(segs, comp, fname):
    L = ['BENEFIT ENROLLMENT AND MAINTENANCE', '=' * W]
    MAINT = {'021': 'Addition', '001': 'Change', '024': 'Cancellation or termination', '025': 'Reinstatement',
             '030': 'Audit or compare', '032': 'Employee information not applicable'}
    DT = {'356': 'Eligibility begin', '357': 'Eligibility end', '336': 'Employment begin', '338': 'Medicare begin',
          '348': 'Benefit begin', '349': 'Benefit end', '303': 'Maintenance effective', '382': 'Enrollment signature',
          '300': 'Enrollment signature', '358': 'Hire date / pay period', '286': 'Retirement', '301': 'COBRA qualifying event',
          '543': 'Last premium paid'}
    COV = {'HLT': 'Health', 'DEN': 'Dental', 'VIS': 'Vision', 'HMO': 'HMO', 'PPO': 'PPO', 'POS': 'Point of service',
           'EPO': 'EPO', 'LTD': 'Long-term disability', 'STD': 'Short-term disability', 'AH': 'Accidental', 'DCP': 'Dental capitation',
           'PDG': 'Prescription drug', 'AK': 'Outpatient', 'MM': 'Major medical'}
    LEVEL = {'EMP': 'Employee only', 'FAM': 'Family', 'ESP': 'Employee and spouse', 'ECH': 'Employee and children',
             'IND': 'Individual', 'SPC': 'Spouse and children', 'DEP': 'Dependents only', 'CHD': 'Children only',
             'E1D': 'Employee and one dependent'}
    for s in segs:
        t = s[0]
        if t == 'BGN':
            L.append(f"Transaction set purpose: {'Original' if e(s,1)=='00' else e(s,1)}   Reference: {e(s,2)}   Date: {d8(e(s,3))} {e(s,4)}"
                     + (f"   Action: {'Verify' if e(s,8)=='4' else 'Change (update)' if e(s,8)=='2' else 'Replace' if e(s,8)=='RX' else e(s,8)}" if e(s, 8) else ''))
        elif t == 'REF' and e(s, 1) == '38':
            L.append(f"Master policy number: {e(s,2)}")
        elif t == 'N1':
            L.append(f"{NM1.get(e(s,1), e(s,1))}: {e(s,2) or '(name not sent)'}   ID ({e(s,3)}): {e(s,4)}")
        elif t == 'INS':
            L += ['', '-' * W, 'MEMBER',
                  f"  Subscriber: {'Yes' if e(s,1)=='Y' else 'No'}   Relationship: {REL.get(e(s,2), e(s,2))}   "
                  f"Maintenance: {MAINT.get(e(s,3), e(s,3))}" + (f" (reason {e(s,4)})" if e(s, 4) else '')]
            L.append(f"  Benefit status: {e(s,5)}" + (f"   Employment status: {e(s,8)}" if e(s, 8) else '')
                     + (f"   Student status: {e(s,9)}" if e(s, 9) else '') + (f"   Handicap: {e(s,10)}" if e(s, 10) else ''))
        elif t == 'REF':
            lab = {'0F': 'Subscriber identifier', '1L': 'Group or policy number', '17': 'Client reporting category',
                   '23': 'Client number', 'ZZ': 'Mutually defined', 'DX': 'Department/agency', '3H': 'Case number',
                   '6O': 'Cross reference', 'F6': 'Health insurance claim number', 'ABB': 'Personal ID'}.get(e(s, 1), 'Ref ' + e(s, 1))
            L.append(f"  {lab}: {e(s,2)}")
        elif t == 'DTP':
            L.append(f"  {DT.get(e(s,1), 'Date ' + e(s,1))}: {d8(e(s,3))}")
        elif t == 'NM1':
            ent = Ent(s)
            if ent.code in ('IL', '74'):
                L.append(f"  {NM1.get(ent.code)} name: {ent.name}   ID ({ent.idq}): {ent.id}")
            else:
                L.append(f"  {NM1.get(ent.code, ent.code)}: {ent.name}" + (f"   ID ({ent.idq}): {ent.id}" if ent.id else '')
                         + (f"   relationship {e(s,10)}" if e(s, 10) else ''))
        elif t == 'PER':
            L.append('  Contact: ' + ', '.join(f"{e(s,i)} {e(s,i+1)}" for i in (3, 5, 7) if e(s, i)))
        elif t == 'N3':
            L.append('  Address: ' + ' '.join(x for x in s[1:] if x))
        elif t == 'N4':
            L.append(f"           {e(s,1)}, {e(s,2)} {e(s,3)}")
        elif t == 'DMG':
            L.append(f"  Date of birth: {d8(e(s,2))}   Sex: {e(s,3)}" + (f"   Marital status: {e(s,4)}" if e(s, 4) else ''))
        elif t == 'HD':
            L += ['', f"  HEALTH COVERAGE: maintenance {MAINT.get(e(s,1), e(s,1))}; insurance line {COV.get(e(s,3), e(s,3))}"
                  + (f"; plan {e(s,4)}" if e(s, 4) else '') + (f"; coverage level {LEVEL.get(e(s,5), e(s,5))}" if e(s, 5) else '')]
        elif t == 'LX':
            L.append(f"  Provider information (line {e(s,1)})")
        elif t == 'COB':
            L.append(f"  Coordination of benefits: payer responsibility {e(s,1)}, policy {e(s,2)}, coverage {e(s,3)}")
        elif t == 'EC':
            L.append(f"  Employment class: {' '.join(x for x in s[1:] if x)}")
        elif t == 'ICM':
            L.append(f"  Income: frequency {e(s,1)}, wage {money(e(s,2))}, hours {e(s,3)}")
        elif t == 'HLH':
            L.append(f"  Health information: {' '.join(x for x in s[1:] if x)}")
    L += ['', 'Authorized signature: ___________________________   Date: __________']
    return L

def main():
    repo = sys.argv[1]; out = sys.argv[2] if len(sys.argv) > 2 else 'corpus/sources/' + SRC
    base = 'src/tests/resources/'
    skip = {  # near-duplicates of a file that is kept
        '837_004010X098A1/dependent-commercial-insurance-02.837', '837_005010X222A2/demo.cob.example3.B.837',
        '837_005010X222A2/demo.cob.example3.C.837', '834_005010X220A1/reinstate-employee-coverage-level.834',
        '834_005010X220A1/reinstate-member-eligiblity-ins.834', '837_004010X096A1/homeowners.837',
        '276_005010X212/claim-level-status-ncpdp.276', '277_005010X212/claim-level-status-ncpdp.277',
        '834_005010X220A1/terminate-subscriber-eligibility.834', '834_005010X220A1/cancel-dependent.834',
        # 4010 versions of the same guide examples as 5010 files that are kept
        '837_004010X096A1/institutional.837', '837_004010X098A1/patient-is-subscriber.837',
        '837_004010X098A1/coordination-of-benefits.837', '837_004010X098A1/patient-is-dependent.837',
        '837_005010X222A2/demo.example6.837', '837_005010X222A2/demo.drug.example10.2.837',
    }
    files = sorted(p for p in git_ls(repo) if p.startswith(base) and re.search(r'\.(27[0167]|83[457]i?)$', p))
    toml = []; n = 0
    for p in files:
        rel = p[len(base):]
        if rel in skip: continue
        raw = git_show(repo, p)
        segs, comp = segments(raw)
        st = [s for s in segs if s[0] == 'ST'][0]
        kind = e(st, 1); gs = [s for s in segs if s[0] == 'GS'][0]; ver = e(gs, 8)
        if kind == '837':
            head, claims = parse_837(segs, comp)
            L = render_837i(head, claims, rel) if ('X223' in ver or 'X096' in ver) else render_837p(head, claims, rel)
        elif kind == '835': L = render_835(segs, comp, rel)
        elif kind in ('270', '271', '276', '277'): L = render_27x(segs, comp, rel, kind)
        elif kind == '834': L = render_834(segs, comp, rel)
        else: continue
        n += 1
        did = f'{SRC}-{n}'
        pages = []; curp = []
        for l in L:
            if l == '\f':
                pages.append(curp); curp = []; continue
            for l2 in (wrap_(l, 95) if len(l) > 95 else [l]):
                curp.append(l2)
            if len(curp) >= 50: pages.append(curp); curp = []
        if curp: pages.append(curp)
        txt = '\n\f\n'.join('\n'.join(x.rstrip() for x in pg) for pg in pages if any(y.strip() for y in pg)) + '\n'
        open(os.path.join(out, did + '.txt'), 'w').write(txt)
        toml.append(f'[[doc]]\nid = "{did}"\ntype = "ADMINISTRATIVE"\nfile = "{did}.txt"\n'
                    f'origin = "{p}"\ntitle = {json.dumps(txt.split(chr(10))[0])}\n')
    open(os.path.join(out, 'docs.toml'), 'w').write('\n'.join(toml))
    print(n, 'docs')

if __name__ == '__main__':
    main()
