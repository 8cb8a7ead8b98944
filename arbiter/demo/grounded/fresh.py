"""A second held-out set (bench/grounded.py's `fresh_held_out`): ten questions over paragraphs of 45 CFR Part
164 that the first corpus does not use, written after the checks' second revision and never tuned on. The
generator (build.py) turns them into items and plants the faults as for the first 42; none is in the demo.

Chunk ids start with N, so the first corpus's distractor pools (chunk ids starting with C) are unchanged.
"""

from __future__ import annotations

from arbiter.demo.grounded.spec import Spec, one

# chunk_id: (source, section, page, text), transcribed from the eCFR (public domain)
FRESH_CHUNKS: dict[str, tuple[str, str, int | None, str]] = {
    "N01": (
        "45 CFR 164.308(a)(1)(ii)(A)",
        "Security management process: risk analysis",
        None,
        "(A) Risk analysis (Required). Conduct an accurate and thorough assessment of the potential risks and "
        "vulnerabilities to the confidentiality, integrity, and availability of electronic protected health "
        "information held by the covered entity or business associate.",
    ),
    "N02": (
        "45 CFR 164.308(a)(2)",
        "Security Rule: assigned security responsibility",
        None,
        "(2) Standard: Assigned security responsibility. Identify the security official who is responsible for "
        "the development and implementation of the policies and procedures required by this subpart for the "
        "covered entity or business associate.",
    ),
    "N03": (
        "45 CFR 164.312(d)",
        "Security Rule: person or entity authentication",
        None,
        "(d) Standard: Person or entity authentication. Implement procedures to verify that a person or entity "
        "seeking access to electronic protected health information is the one claimed.",
    ),
    "N04": (
        "45 CFR 164.312(e)(1)",
        "Security Rule: transmission security",
        None,
        "(e)(1) Standard: Transmission security. Implement technical security measures to guard against "
        "unauthorized access to electronic protected health information that is being transmitted over an "
        "electronic communications network.",
    ),
    "N05": (
        "45 CFR 164.522(b)(1)(i)",
        "Confidential communications requirements",
        None,
        "(b)(1) Standard: Confidential communications requirements. (i) A covered health care provider must "
        "permit individuals to request and must accommodate reasonable requests by individuals to receive "
        "communications of protected health information from the covered health care provider by alternative "
        "means or at alternative locations.",
    ),
    "N06": (
        "45 CFR 164.530(b)(2)(i)",
        "Training: implementation specifications",
        None,
        "(2) Implementation specifications: Training. (i) A covered entity must provide training that meets the "
        "requirements of paragraph (b)(1) of this section, as follows: (A) To each member of the covered "
        "entity's workforce by no later than the compliance date for the covered entity; (B) Thereafter, to "
        "each new member of the workforce within a reasonable period of time after the person joins the covered "
        "entity's workforce; and (C) To each member of the covered entity's workforce whose functions are "
        "affected by a material change in the policies or procedures required by this subpart or subpart D of "
        "this part, within a reasonable period of time after the material change becomes effective in "
        "accordance with paragraph (i) of this section.",
    ),
    "N07": (
        "45 CFR 164.410(a)(1)",
        "Notification by a business associate: general rule",
        None,
        "(a) Standard—(1) General rule. A business associate shall, following the discovery of a breach of "
        "unsecured protected health information, notify the covered entity of such breach.",
    ),
    "N08": (
        "45 CFR 164.308(a)(6)(ii)",
        "Security incident procedures: response and reporting",
        None,
        "(ii) Implementation specification: Response and reporting (Required). Identify and respond to "
        "suspected or known security incidents; mitigate, to the extent practicable, harmful effects of "
        "security incidents that are known to the covered entity or business associate; and document security "
        "incidents and their outcomes.",
    ),
}

FRESH_SPECS: tuple[Spec, ...] = (
    one(
        "N01",
        "What risk analysis must a covered entity perform for electronic protected health information?",
        "N01",
        "Conduct an accurate and thorough assessment of the potential risks and vulnerabilities to the confidentiality, integrity, and availability of electronic protected health information held by the covered entity or business associate",
        "A covered entity must conduct an accurate and thorough assessment of the potential risks and vulnerabilities to the confidentiality, integrity, and availability of its electronic protected health information.",
        "La entidad cubierta debe realizar una evaluación precisa y completa de los riesgos y vulnerabilidades de la información de salud protegida electrónica.",
    ),
    one(
        "N02",
        "Who must be responsible for the security policies of a covered entity?",
        "N02",
        "Identify the security official who is responsible for the development and implementation of the policies and procedures required by this subpart for the covered entity or business associate",
        "A covered entity must identify a security official responsible for the development and implementation of the policies and procedures required by the Security Rule.",
    ),
    one(
        "N03",
        "Must a covered entity verify the identity of a person seeking access to electronic protected health information?",
        "N03",
        "Implement procedures to verify that a person or entity seeking access to electronic protected health information is the one claimed",
        "A covered entity must implement procedures to verify that a person or entity seeking access to electronic protected health information is the one claimed.",
    ),
    one(
        "N04",
        "How must electronic protected health information be protected while it is transmitted over a network?",
        "N04",
        "Implement technical security measures to guard against unauthorized access to electronic protected health information that is being transmitted over an electronic communications network",
        "A covered entity must implement technical security measures to guard against unauthorized access to electronic protected health information transmitted over an electronic communications network.",
    ),
    one(
        "N05",
        "Must a health care provider accommodate a request to receive communications at an alternative location?",
        "N05",
        "A covered health care provider must permit individuals to request and must accommodate reasonable requests by individuals to receive communications of protected health information",
        "A covered health care provider must accommodate reasonable requests by individuals to receive communications of protected health information.",
        "El proveedor de atención médica debe aceptar las solicitudes razonables de recibir comunicaciones de información de salud protegida.",
    ),
    Spec(
        "N06",
        "When must a new member of the workforce receive privacy training?",
        (
            (
                "N06",
                "A covered entity must provide training that meets the requirements of paragraph (b)(1) of this section",
            ),
            (
                "N06",
                "Thereafter, to each new member of the workforce within a reasonable period of time after the person joins the covered entity's workforce",
            ),
        ),
        (
            (
                "A covered entity must provide training to each new member of the workforce within a reasonable period of time after the person joins the covered entity's workforce.",
                (0, 1),
            ),
        ),
    ),
    one(
        "N07",
        "Whom must a business associate notify after discovering a breach?",
        "N07",
        "A business associate shall, following the discovery of a breach of unsecured protected health information, notify the covered entity of such breach",
        "A business associate shall notify the covered entity of a breach of unsecured protected health information following its discovery.",
    ),
    one(
        "N08",
        "What must a covered entity do about suspected security incidents?",
        "N08",
        "Identify and respond to suspected or known security incidents; mitigate, to the extent practicable, harmful effects of security incidents that are known to the covered entity or business associate",
        "A covered entity must identify and respond to suspected or known security incidents and mitigate, to the extent practicable, their known harmful effects.",
    ),
    Spec(
        "N09",
        "How many hours of privacy training must each workforce member complete per year?",
        retrieved=("N06", "C08"),
        missing=("No retrieved source sets a number of hours of training.",),
        fabricated="Each workforce member must complete 8 hours of privacy training per year.",
    ),
    Spec(
        "N10",
        "How often must a covered entity run a penetration test of its systems?",
        retrieved=("N01", "N04"),
        missing=("No retrieved source requires penetration testing or sets how often it is done.",),
        fabricated="A covered entity must run a penetration test of its systems every 12 months.",
    ),
)
