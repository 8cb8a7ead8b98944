"""The demo's questions 21–42 (questions.py holds the first twenty and the Spec they share): breach notices,
the Security Rule, conflicting sources and questions the retrieved chunks do not answer."""

from __future__ import annotations

from arbiter.demo.grounded.spec import Spec, one

MORE: tuple[Spec, ...] = (
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
    one(
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
    one(
        "Q25",
        "How long must the toll-free number in a substitute breach notice remain active?",
        "C22",
        "Include a toll-free phone number that remains active for at least 90 days where an individual can learn whether the individual's unsecured protected health information may be included in the breach",
        "Substitute notice includes a toll-free phone number that remains active for at least 90 days.",
    ),
    one(
        "Q26",
        "How long must Security Rule documentation be retained?",
        "C23",
        "Retain the documentation required by paragraph (b)(1) of this section for 6 years from the date of its creation or the date when it last was in effect, whichever is later",
        "Security Rule documentation must be retained for 6 years from the date of its creation or the date when it last was in effect, whichever is later.",
    ),
    one(
        "Q27",
        "What audit controls does the Security Rule require?",
        "C24",
        "Implement hardware, software, and/or procedural mechanisms that record and examine activity in information systems that contain or use electronic protected health information",
        "Implement hardware, software, and/or procedural mechanisms that record and examine activity in information systems that contain or use electronic protected health information.",
        "Se deben implantar mecanismos de hardware, software y procedimientos que registren y examinen la actividad de los sistemas de información.",
    ),
    one(
        "Q28",
        "Must a covered entity implement privacy policies and procedures?",
        "C25",
        "A covered entity must implement policies and procedures with respect to protected health information that are designed to comply with the standards, implementation specifications, or other requirements of this subpart",
        "A covered entity must implement policies and procedures with respect to protected health information designed to comply with the standards and implementation specifications of the rule.",
    ),
    one(
        "Q29",
        "Who may be allowed access to systems that maintain electronic protected health information?",
        "C26",
        "Implement technical policies and procedures for electronic information systems that maintain electronic protected health information to allow access only to those persons or software programs that have been granted access rights",
        "Technical policies and procedures must allow access to electronic information systems that maintain electronic protected health information only to persons or software programs that have been granted access rights.",
    ),
    one(
        "Q30",
        "What must a covered entity give an individual whose request for access it denies?",
        "C01",
        "If the covered entity denies the request, in whole or in part, it must provide the individual with a written denial",
        "If the covered entity denies the request for access, in whole or in part, it must provide the individual with a written denial.",
        "Si la entidad cubierta deniega la solicitud de acceso, debe entregar a la persona una denegación por escrito.",
    ),
    one(
        "Q31",
        "What must a covered entity do when it grants a request for access?",
        "C01",
        "If the covered entity grants the request, in whole or in part, it must inform the individual of the acceptance of the request and provide the access requested",
        "If the covered entity grants the request, it must inform the individual of the acceptance of the request and provide the access requested.",
    ),
    one(
        "Q32",
        "What must a covered entity tell the individual when it extends the time to act on a request for access?",
        "C02",
        "provides the individual with a written statement of the reasons for the delay and the date by which the covered entity will complete its action on the request",
        "To extend the time, the covered entity provides the individual with a written statement of the reasons for the delay and the date by which it will complete its action on the request.",
    ),
    one(
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
