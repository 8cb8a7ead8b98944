"""The demo's questions and their correct answers, over the chunks of chunks.py.

Each answerable question names its quotes (a chunk and a verbatim cut of it) and its statements (each
citing quotes by position); an unanswerable one names the chunks retrieved for it, the evidence an honest
answer reports missing, and what a model answering from memory would claim instead. The generator
(build.py) turns these into items and plants the faults.
"""

from __future__ import annotations

from arbiter.demo.grounded.questions_more import MORE
from arbiter.demo.grounded.spec import Spec, one

_FIRST: tuple[Spec, ...] = (
    one(
        "Q01",
        "How many days does a covered entity have to act on a request for access?",
        "C01",
        "the covered entity must act on a request for access no later than 30 days after receipt of the request",
        "A covered entity must act on a request for access no later than 30 days after receipt of the request.",
        "La entidad cubierta debe responder a una solicitud de acceso dentro de los 30 días siguientes a su recepción.",
    ),
    Spec(
        "Q02",
        "Can a covered entity extend the time to act on a request for access, and how often?",
        (
            ("C02", "the covered entity may extend the time for such actions by no more than 30 days"),
            (
                "C02",
                "The covered entity may have only one such extension of time for action on a request for access",
            ),
        ),
        (
            ("The covered entity may extend the time for such actions by no more than 30 days.", (0,)),
            (
                "The covered entity may have only one such extension of time for action on a request for access.",
                (1,),
            ),
        ),
    ),
    one(
        "Q03",
        "How long does a covered entity have to act on a request for an amendment?",
        "C03",
        "The covered entity must act on the individual's request for an amendment no later than 60 days after receipt of such a request",
        "The covered entity must act on an individual's request for an amendment no later than 60 days after receipt of the request.",
        "La entidad cubierta debe responder a la solicitud de enmienda de la persona dentro de los 60 días siguientes a su recepción.",
    ),
    one(
        "Q04",
        "How far back does an accounting of disclosures of protected health information go?",
        "C04",
        "An individual has a right to receive an accounting of disclosures of protected health information made by a covered entity in the six years prior to the date on which the accounting is requested",
        "An individual has a right to receive an accounting of disclosures of protected health information made by a covered entity in the six years prior to the date the accounting is requested.",
    ),
    one(
        "Q05",
        "By when must a covered entity act on a request for an accounting of disclosures?",
        "C05",
        "The covered entity must act on the individual's request for an accounting, no later than 60 days after receipt of such a request",
        "The covered entity must act on an individual's request for an accounting no later than 60 days after receipt of the request.",
        "La entidad cubierta debe atender la solicitud de un informe de divulgaciones dentro de los 60 días siguientes a su recepción.",
    ),
    Spec(
        "Q06",
        "May a covered entity charge a fee for an accounting of disclosures?",
        (
            (
                "C05",
                "The covered entity must provide the first accounting to an individual in any 12 month period without charge",
            ),
            (
                "C05",
                "The covered entity may impose a reasonable, cost-based fee for each subsequent request for an accounting by the same individual within the 12 month period",
            ),
        ),
        (
            (
                "The covered entity must provide the first accounting to an individual in any 12 month period without charge.",
                (0,),
            ),
            (
                "The covered entity may impose a reasonable, cost-based fee for each subsequent request for an accounting within the same 12 month period.",
                (1,),
            ),
        ),
    ),
    one(
        "Q07",
        "How long must a covered entity retain its privacy documentation?",
        "C06",
        "A covered entity must retain the documentation required by paragraph (j)(1) of this section for six years from the date of its creation or the date when it last was in effect, whichever is later",
        "A covered entity must retain the required documentation for six years from the date of its creation or the date when it last was in effect, whichever is later.",
        "La entidad cubierta debe conservar la documentación durante seis años desde la fecha de su creación o de su última vigencia.",
    ),
    one(
        "Q08",
        "Must a covered entity designate a privacy official?",
        "C07",
        "A covered entity must designate a privacy official who is responsible for the development and implementation of the policies and procedures of the entity",
        "A covered entity must designate a privacy official responsible for the development and implementation of its policies and procedures.",
        "La entidad cubierta debe designar a un responsable de privacidad encargado de sus políticas y procedimientos.",
    ),
    one(
        "Q09",
        "Who must receive complaints at a covered entity?",
        "C07",
        "A covered entity must designate a contact person or office who is responsible for receiving complaints under this section",
        "A covered entity must designate a contact person or office responsible for receiving complaints.",
    ),
    one(
        "Q10",
        "Which members of the workforce must a covered entity train on its privacy policies?",
        "C08",
        "A covered entity must train all members of its workforce on the policies and procedures with respect to protected health information",
        "A covered entity must train all members of its workforce on its policies and procedures with respect to protected health information.",
        "La entidad cubierta debe formar a todos los miembros de su personal en sus políticas y procedimientos de privacidad.",
    ),
    one(
        "Q11",
        "Must a covered entity provide a way for individuals to make complaints about its privacy policies?",
        "C09",
        "A covered entity must provide a process for individuals to make complaints concerning the covered entity's policies and procedures",
        "A covered entity must provide a process for individuals to make complaints concerning its policies and procedures.",
    ),
    one(
        "Q12",
        "What must a covered entity do about workforce members who fail to follow its privacy policies?",
        "C10",
        "A covered entity must have and apply appropriate sanctions against members of its workforce who fail to comply with the privacy policies and procedures of the covered entity",
        "A covered entity must have and apply appropriate sanctions against members of its workforce who fail to comply with its privacy policies and procedures.",
    ),
    one(
        "Q13",
        "May a covered entity retaliate against an individual for filing a complaint?",
        "C11",
        "May not intimidate, threaten, coerce, discriminate against, or take other retaliatory action against any individual for the exercise by the individual of any right established",
        "A covered entity may not intimidate, threaten, coerce, discriminate against, or take other retaliatory action against any individual for the exercise of any right established by the rule.",
    ),
    one(
        "Q14",
        "Can a covered entity require individuals to waive their privacy rights as a condition of treatment?",
        "C12",
        "A covered entity may not require individuals to waive their rights under § 160.306 of this subchapter, this subpart, or subpart D of this part, as a condition of the provision of treatment",
        "A covered entity may not require individuals to waive their rights as a condition of the provision of treatment.",
    ),
    one(
        "Q15",
        "What safeguards must a covered entity have to protect the privacy of health information?",
        "C13",
        "A covered entity must have in place appropriate administrative, technical, and physical safeguards to protect the privacy of protected health information",
        "A covered entity must have in place appropriate administrative, technical, and physical safeguards to protect the privacy of protected health information.",
        "La entidad cubierta debe contar con salvaguardas administrativas, técnicas y físicas para proteger la privacidad de la información de salud.",
    ),
    one(
        "Q16",
        "What does the minimum necessary standard require when disclosing protected health information?",
        "C14",
        "a covered entity or business associate must make reasonable efforts to limit protected health information to the minimum necessary to accomplish the intended purpose of the use, disclosure, or request",
        "A covered entity or business associate must make reasonable efforts to limit protected health information to the minimum necessary to accomplish the intended purpose of the disclosure.",
    ),
    one(
        "Q17",
        "For how long is the protected health information of a deceased individual protected?",
        "C15",
        "A covered entity must comply with the requirements of this subpart with respect to the protected health information of a deceased individual for a period of 50 years following the death of the individual",
        "A covered entity must protect the health information of a deceased individual for a period of 50 years following the death of the individual.",
    ),
    one(
        "Q18",
        "May a covered entity disclose protected health information without an authorization?",
        "C16",
        "a covered entity may not use or disclose protected health information without an authorization that is valid under this section",
        "A covered entity may not use or disclose protected health information without a valid authorization, unless otherwise permitted.",
    ),
    one(
        "Q19",
        "Must a covered entity keep signed authorizations?",
        "C17",
        "A covered entity must document and retain any signed authorization under this section as required by § 164.530(j)",
        "A covered entity must document and retain any signed authorization.",
    ),
    one(
        "Q20",
        "How soon after discovering a breach must a covered entity notify the affected individuals?",
        "C18",
        "a covered entity shall provide the notification required by paragraph (a) of this section without unreasonable delay and in no case later than 60 calendar days after discovery of a breach",
        "A covered entity shall provide the notification without unreasonable delay and in no case later than 60 calendar days after discovery of a breach.",
        "La entidad cubierta debe notificar sin demora injustificada y nunca después de 60 días naturales tras descubrir la violación.",
    ),
)

SPECS: tuple[Spec, ...] = _FIRST + MORE
