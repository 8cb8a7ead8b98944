"""The demo's questions and their correct answers, over the chunks of chunks.py.

Each answerable question names its quotes (a chunk and a verbatim cut of it) and its statements (each
citing quotes by position); an unanswerable one names the chunks retrieved for it, the evidence an honest
answer reports missing, and what a model answering from memory would claim instead. The generator
(build.py) turns these into items and plants the faults.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    qid: str
    question: str
    quotes: tuple[tuple[str, str], ...] = ()  # (chunk_id, verbatim cut of its text)
    statements: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (text, positions of the quotes it cites)
    retrieved: tuple[str, ...] = ()  # unanswerable questions: the (irrelevant) chunks retrieved
    missing: tuple[str, ...] = ()  # unanswerable questions: what evidence is missing
    fabricated: str = ""  # unanswerable questions: a claim from memory, not from the chunks
    spanish: tuple[str, ...] = ()  # the statements in Spanish (for the language-mismatch fault)

    @property
    def answerable(self) -> bool:
        return bool(self.quotes)

    @property
    def conflict(self) -> bool:
        return any(chunk.startswith("P") for chunk, _ in self.quotes)


def _one(qid: str, question: str, chunk: str, quote: str, statement: str, spanish: str = "") -> Spec:
    return Spec(qid, question, ((chunk, quote),), ((statement, (0,)),), spanish=(spanish,) if spanish else ())


SPECS: tuple[Spec, ...] = (
    _one(
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
    _one(
        "Q03",
        "How long does a covered entity have to act on a request for an amendment?",
        "C03",
        "The covered entity must act on the individual's request for an amendment no later than 60 days after receipt of such a request",
        "The covered entity must act on an individual's request for an amendment no later than 60 days after receipt of the request.",
        "La entidad cubierta debe responder a la solicitud de enmienda de la persona dentro de los 60 días siguientes a su recepción.",
    ),
    _one(
        "Q04",
        "How far back does an accounting of disclosures of protected health information go?",
        "C04",
        "An individual has a right to receive an accounting of disclosures of protected health information made by a covered entity in the six years prior to the date on which the accounting is requested",
        "An individual has a right to receive an accounting of disclosures of protected health information made by a covered entity in the six years prior to the date the accounting is requested.",
    ),
    _one(
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
    _one(
        "Q07",
        "How long must a covered entity retain its privacy documentation?",
        "C06",
        "A covered entity must retain the documentation required by paragraph (j)(1) of this section for six years from the date of its creation or the date when it last was in effect, whichever is later",
        "A covered entity must retain the required documentation for six years from the date of its creation or the date when it last was in effect, whichever is later.",
        "La entidad cubierta debe conservar la documentación durante seis años desde la fecha de su creación o de su última vigencia.",
    ),
    _one(
        "Q08",
        "Must a covered entity designate a privacy official?",
        "C07",
        "A covered entity must designate a privacy official who is responsible for the development and implementation of the policies and procedures of the entity",
        "A covered entity must designate a privacy official responsible for the development and implementation of its policies and procedures.",
        "La entidad cubierta debe designar a un responsable de privacidad encargado de sus políticas y procedimientos.",
    ),
    _one(
        "Q09",
        "Who must receive complaints at a covered entity?",
        "C07",
        "A covered entity must designate a contact person or office who is responsible for receiving complaints under this section",
        "A covered entity must designate a contact person or office responsible for receiving complaints.",
    ),
    _one(
        "Q10",
        "Which members of the workforce must a covered entity train on its privacy policies?",
        "C08",
        "A covered entity must train all members of its workforce on the policies and procedures with respect to protected health information",
        "A covered entity must train all members of its workforce on its policies and procedures with respect to protected health information.",
        "La entidad cubierta debe formar a todos los miembros de su personal en sus políticas y procedimientos de privacidad.",
    ),
    _one(
        "Q11",
        "Must a covered entity provide a way for individuals to make complaints about its privacy policies?",
        "C09",
        "A covered entity must provide a process for individuals to make complaints concerning the covered entity's policies and procedures",
        "A covered entity must provide a process for individuals to make complaints concerning its policies and procedures.",
    ),
    _one(
        "Q12",
        "What must a covered entity do about workforce members who fail to follow its privacy policies?",
        "C10",
        "A covered entity must have and apply appropriate sanctions against members of its workforce who fail to comply with the privacy policies and procedures of the covered entity",
        "A covered entity must have and apply appropriate sanctions against members of its workforce who fail to comply with its privacy policies and procedures.",
    ),
    _one(
        "Q13",
        "May a covered entity retaliate against an individual for filing a complaint?",
        "C11",
        "May not intimidate, threaten, coerce, discriminate against, or take other retaliatory action against any individual for the exercise by the individual of any right established",
        "A covered entity may not intimidate, threaten, coerce, discriminate against, or take other retaliatory action against any individual for the exercise of any right established by the rule.",
    ),
    _one(
        "Q14",
        "Can a covered entity require individuals to waive their privacy rights as a condition of treatment?",
        "C12",
        "A covered entity may not require individuals to waive their rights under § 160.306 of this subchapter, this subpart, or subpart D of this part, as a condition of the provision of treatment",
        "A covered entity may not require individuals to waive their rights as a condition of the provision of treatment.",
    ),
    _one(
        "Q15",
        "What safeguards must a covered entity have to protect the privacy of health information?",
        "C13",
        "A covered entity must have in place appropriate administrative, technical, and physical safeguards to protect the privacy of protected health information",
        "A covered entity must have in place appropriate administrative, technical, and physical safeguards to protect the privacy of protected health information.",
        "La entidad cubierta debe contar con salvaguardas administrativas, técnicas y físicas para proteger la privacidad de la información de salud.",
    ),
    _one(
        "Q16",
        "What does the minimum necessary standard require when disclosing protected health information?",
        "C14",
        "a covered entity or business associate must make reasonable efforts to limit protected health information to the minimum necessary to accomplish the intended purpose of the use, disclosure, or request",
        "A covered entity or business associate must make reasonable efforts to limit protected health information to the minimum necessary to accomplish the intended purpose of the disclosure.",
    ),
    _one(
        "Q17",
        "For how long is the protected health information of a deceased individual protected?",
        "C15",
        "A covered entity must comply with the requirements of this subpart with respect to the protected health information of a deceased individual for a period of 50 years following the death of the individual",
        "A covered entity must protect the health information of a deceased individual for a period of 50 years following the death of the individual.",
    ),
    _one(
        "Q18",
        "May a covered entity disclose protected health information without an authorization?",
        "C16",
        "a covered entity may not use or disclose protected health information without an authorization that is valid under this section",
        "A covered entity may not use or disclose protected health information without a valid authorization, unless otherwise permitted.",
    ),
    _one(
        "Q19",
        "Must a covered entity keep signed authorizations?",
        "C17",
        "A covered entity must document and retain any signed authorization under this section as required by § 164.530(j)",
        "A covered entity must document and retain any signed authorization.",
    ),
    _one(
        "Q20",
        "How soon after discovering a breach must a covered entity notify the affected individuals?",
        "C18",
        "a covered entity shall provide the notification required by paragraph (a) of this section without unreasonable delay and in no case later than 60 calendar days after discovery of a breach",
        "A covered entity shall provide the notification without unreasonable delay and in no case later than 60 calendar days after discovery of a breach.",
        "La entidad cubierta debe notificar sin demora injustificada y nunca después de 60 días naturales tras descubrir la violación.",
    ),
    Spec(
        "Q21",
        "When must a covered entity notify the media about a breach?",
        (
            (
                "C19",
                "For a breach of unsecured protected health information involving more than 500 residents of a State or jurisdiction",
            ),
            (
                "C19",
                "a covered entity shall, following the discovery of the breach as provided in § 164.404(a)(2), notify prominent media outlets serving the State or jurisdiction",
            ),
        ),
        (
            (
                "For a breach involving more than 500 residents of a State or jurisdiction, a covered entity shall notify prominent media outlets serving the State or jurisdiction.",
                (0, 1),
            ),
        ),
    ),
    Spec(
        "Q22",
        "What must a covered entity do about breaches involving less than 500 individuals?",
        (
            (
                "C20",
                "For breaches of unsecured protected health information involving less than 500 individuals",
            ),
            (
                "C20",
                "a covered entity shall maintain a log or other documentation of such breaches and, not later than 60 days after the end of each calendar year, provide the notification required",
            ),
        ),
        (
            (
                "For breaches involving less than 500 individuals, a covered entity shall maintain a log or other documentation of such breaches and provide the notification not later than 60 days after the end of each calendar year.",
                (0, 1),
            ),
        ),
    ),
    _one(
        "Q23",
        "How soon must a business associate report a breach?",
        "C21",
        "a business associate shall provide the notification required by paragraph (a) of this section without unreasonable delay and in no case later than 60 calendar days after discovery of a breach",
        "A business associate shall provide the notification without unreasonable delay and in no case later than 60 calendar days after discovery of a breach.",
        "El socio comercial debe notificar la violación sin demora injustificada y nunca después de 60 días naturales tras descubrirla.",
    ),
    Spec(
        "Q24",
        "What substitute notice is required when contact information is out of date for 10 or more individuals?",
        (
            (
                "C22",
                "In the case in which there is insufficient or out-of-date contact information for 10 or more individuals",
            ),
            (
                "C22",
                "then such substitute notice shall: (A) Be in the form of either a conspicuous posting for a period of 90 days on the home page of the Web site of the covered entity",
            ),
        ),
        (
            (
                "Where contact information is insufficient or out-of-date for 10 or more individuals, substitute notice shall be a conspicuous posting for a period of 90 days on the home page of the covered entity's Web site.",
                (0, 1),
            ),
        ),
    ),
    _one(
        "Q25",
        "How long must the toll-free number in a substitute breach notice remain active?",
        "C22",
        "Include a toll-free phone number that remains active for at least 90 days where an individual can learn whether the individual's unsecured protected health information may be included in the breach",
        "Substitute notice includes a toll-free phone number that remains active for at least 90 days.",
    ),
    _one(
        "Q26",
        "How long must Security Rule documentation be retained?",
        "C23",
        "Retain the documentation required by paragraph (b)(1) of this section for 6 years from the date of its creation or the date when it last was in effect, whichever is later",
        "Security Rule documentation must be retained for 6 years from the date of its creation or the date when it last was in effect, whichever is later.",
    ),
    _one(
        "Q27",
        "What audit controls does the Security Rule require?",
        "C24",
        "Implement hardware, software, and/or procedural mechanisms that record and examine activity in information systems that contain or use electronic protected health information",
        "Implement hardware, software, and/or procedural mechanisms that record and examine activity in information systems that contain or use electronic protected health information.",
        "Se deben implantar mecanismos de hardware, software y procedimientos que registren y examinen la actividad de los sistemas de información.",
    ),
    _one(
        "Q28",
        "Must a covered entity implement privacy policies and procedures?",
        "C25",
        "A covered entity must implement policies and procedures with respect to protected health information that are designed to comply with the standards, implementation specifications, or other requirements of this subpart",
        "A covered entity must implement policies and procedures with respect to protected health information designed to comply with the standards and implementation specifications of the rule.",
    ),
    _one(
        "Q29",
        "Who may be allowed access to systems that maintain electronic protected health information?",
        "C26",
        "Implement technical policies and procedures for electronic information systems that maintain electronic protected health information to allow access only to those persons or software programs that have been granted access rights",
        "Technical policies and procedures must allow access to electronic information systems that maintain electronic protected health information only to persons or software programs that have been granted access rights.",
    ),
    _one(
        "Q30",
        "What must a covered entity give an individual whose request for access it denies?",
        "C01",
        "If the covered entity denies the request, in whole or in part, it must provide the individual with a written denial",
        "If the covered entity denies the request for access, in whole or in part, it must provide the individual with a written denial.",
        "Si la entidad cubierta deniega la solicitud de acceso, debe entregar a la persona una denegación por escrito.",
    ),
    _one(
        "Q31",
        "What must a covered entity do when it grants a request for access?",
        "C01",
        "If the covered entity grants the request, in whole or in part, it must inform the individual of the acceptance of the request and provide the access requested",
        "If the covered entity grants the request, it must inform the individual of the acceptance of the request and provide the access requested.",
    ),
    _one(
        "Q32",
        "What must a covered entity tell the individual when it extends the time to act on a request for access?",
        "C02",
        "provides the individual with a written statement of the reasons for the delay and the date by which the covered entity will complete its action on the request",
        "To extend the time, the covered entity provides the individual with a written statement of the reasons for the delay and the date by which it will complete its action on the request.",
    ),
    _one(
        "Q33",
        "What must a covered entity give an individual whose request for an amendment it denies?",
        "C03",
        "If the covered entity denies the requested amendment, in whole or in part, it must provide the individual with a written denial",
        "If the covered entity denies the requested amendment, in whole or in part, it must provide the individual with a written denial.",
        "Si la entidad cubierta deniega la enmienda solicitada, debe entregar a la persona una denegación por escrito.",
    ),
    # Conflicting sources: the rule and a (synthetic) organisation's policy; the answer must give both.
    Spec(
        "Q34",
        "How quickly must a request for access be acted on?",
        (
            (
                "C01",
                "the covered entity must act on a request for access no later than 30 days after receipt of the request",
            ),
            (
                "P01",
                "The Privacy Office must act on a patient's request for access no later than 15 days after receipt of the request",
            ),
        ),
        (
            (
                "Under the Privacy Rule, a covered entity must act on a request for access no later than 30 days after receipt of the request.",
                (0,),
            ),
            (
                "The Privacy Office must act on a patient's request for access no later than 15 days after receipt of the request.",
                (1,),
            ),
        ),
    ),
    Spec(
        "Q35",
        "How long must privacy documentation be retained?",
        (
            (
                "C06",
                "A covered entity must retain the documentation required by paragraph (j)(1) of this section for six years from the date of its creation or the date when it last was in effect, whichever is later",
            ),
            (
                "P02",
                "The Privacy Office must retain the documentation of its privacy policies for ten years from the date of its creation or the date when it last was in effect",
            ),
        ),
        (
            (
                "Under the Privacy Rule, a covered entity must retain the required documentation for six years from the date of its creation or the date when it last was in effect.",
                (0,),
            ),
            (
                "The Privacy Office must retain the documentation of its privacy policies for ten years from the date of its creation.",
                (1,),
            ),
        ),
    ),
    Spec(
        "Q36",
        "What is the deadline for notifying individuals after discovery of a breach?",
        (
            (
                "C18",
                "a covered entity shall provide the notification required by paragraph (a) of this section without unreasonable delay and in no case later than 60 calendar days after discovery of a breach",
            ),
            (
                "P03",
                "The Privacy Office must provide the notification to affected individuals without unreasonable delay and in no case later than 30 calendar days after discovery of a breach",
            ),
        ),
        (
            (
                "Under the Breach Notification Rule, a covered entity shall provide the notification without unreasonable delay and in no case later than 60 calendar days after discovery of a breach.",
                (0,),
            ),
            (
                "The Privacy Office must provide the notification to affected individuals in no case later than 30 calendar days after discovery of a breach.",
                (1,),
            ),
        ),
    ),
    # Questions the retrieved chunks do not answer: the right answer abstains.
    Spec(
        "Q37",
        "What is the maximum civil money penalty for a violation of the Privacy Rule?",
        retrieved=("C10", "C12"),
        missing=(
            "The amounts of civil money penalties (45 CFR Part 160, Subpart D) are not in the retrieved sources.",
        ),
        fabricated="The maximum civil money penalty is 50,000 dollars for each violation of the Privacy Rule.",
    ),
    Spec(
        "Q38",
        "Does HIPAA require encryption of email sent to patients?",
        retrieved=("C13", "C24"),
        missing=("No retrieved source addresses encryption of email to patients.",),
        fabricated="A covered entity must encrypt every email sent to patients.",
    ),
    Spec(
        "Q39",
        "How long may a hospital keep a patient waiting in the emergency department?",
        retrieved=("C14", "C08"),
        missing=("Emergency department waiting times are not governed by the retrieved sources.",),
        fabricated="A hospital may not keep a patient waiting in the emergency department for more than 4 hours.",
    ),
    Spec(
        "Q40",
        "What fee may a covered entity charge for a paper copy of a medical record?",
        retrieved=("C05", "C17"),
        missing=("The fee for copies of records (45 CFR 164.524(c)(4)) is not among the retrieved sources.",),
        fabricated="A covered entity may charge no more than 25 cents per page for a paper copy of a medical record.",
    ),
    Spec(
        "Q41",
        "What is the deadline for filing a complaint with the Secretary of HHS?",
        retrieved=("C09", "C11"),
        missing=("Complaints to the Secretary (45 CFR 160.306) are not among the retrieved sources.",),
        fabricated="A complaint with the Secretary of HHS must be filed within 180 days of the violation.",
    ),
    Spec(
        "Q42",
        "Which state laws preempt the HIPAA Privacy Rule?",
        retrieved=("C25", "C15"),
        missing=("Preemption of state law (45 CFR Part 160, Subpart B) is not among the retrieved sources.",),
        fabricated="State laws that are more stringent than the Privacy Rule preempt it.",
    ),
)
