"""The demo's retrieved passages: paragraphs of the HIPAA Privacy, Security and Breach Notification Rules
(45 CFR Part 164, a work of the US government, in the public domain), transcribed from the eCFR, one
paragraph (sometimes abridged at a sentence or list boundary) per chunk; plus three paragraphs of a
synthetic organisation's policy, written for the demo and labelled as such, that conflict with the rule.

Every quote of every demo answer is cut from these texts by the generator (arbiter/demo/grounded/build.py),
which checks that it is a substring; nothing else is ever quoted.
"""

from __future__ import annotations

# chunk_id: (source, section, page, text)
CHUNKS: dict[str, tuple[str, str, int | None, str]] = {
    "C01": (
        "45 CFR 164.524(b)(2)(i)",
        "Access of individuals to protected health information: timely action",
        None,
        "(2) Timely action by the covered entity. (i) Except as provided in paragraph (b)(2)(ii) of this section, "
        "the covered entity must act on a request for access no later than 30 days after receipt of the request "
        "as follows. (A) If the covered entity grants the request, in whole or in part, it must inform the "
        "individual of the acceptance of the request and provide the access requested, in accordance with "
        "paragraph (c) of this section. (B) If the covered entity denies the request, in whole or in part, it "
        "must provide the individual with a written denial, in accordance with paragraph (d) of this section.",
    ),
    "C02": (
        "45 CFR 164.524(b)(2)(ii)",
        "Access of individuals to protected health information: extension",
        None,
        "(ii) If the covered entity is unable to take an action required by paragraph (b)(2)(i)(A) or (B) of "
        "this section within the time required by paragraph (b)(2)(i) of this section, as applicable, the "
        "covered entity may extend the time for such actions by no more than 30 days, provided that: (A) The "
        "covered entity, within the time limit set by paragraph (b)(2)(i) of this section, as applicable, "
        "provides the individual with a written statement of the reasons for the delay and the date by which "
        "the covered entity will complete its action on the request; and (B) The covered entity may have only "
        "one such extension of time for action on a request for access.",
    ),
    "C03": (
        "45 CFR 164.526(b)(2)(i)",
        "Amendment of protected health information: timely action",
        None,
        "(2) Timely action by the covered entity. (i) The covered entity must act on the individual's request "
        "for an amendment no later than 60 days after receipt of such a request, as follows: (A) If the covered "
        "entity grants the requested amendment, in whole or in part, it must take the actions required by "
        "paragraphs (c)(1) and (2) of this section. (B) If the covered entity denies the requested amendment, "
        "in whole or in part, it must provide the individual with a written denial, in accordance with "
        "paragraph (d)(1) of this section.",
    ),
    "C04": (
        "45 CFR 164.528(a)(1)",
        "Accounting of disclosures of protected health information",
        None,
        "(a) Standard: Right to an accounting of disclosures of protected health information. (1) An individual "
        "has a right to receive an accounting of disclosures of protected health information made by a covered "
        "entity in the six years prior to the date on which the accounting is requested, except for disclosures:",
    ),
    "C05": (
        "45 CFR 164.528(c)",
        "Accounting of disclosures: provision of the accounting",
        None,
        "(1) The covered entity must act on the individual's request for an accounting, no later than 60 days "
        "after receipt of such a request, as follows. (2) The covered entity must provide the first accounting "
        "to an individual in any 12 month period without charge. The covered entity may impose a reasonable, "
        "cost-based fee for each subsequent request for an accounting by the same individual within the 12 "
        "month period, provided that the covered entity informs the individual in advance of the fee and "
        "provides the individual with an opportunity to withdraw or modify the request for a subsequent "
        "accounting in order to avoid or reduce the fee.",
    ),
    "C06": (
        "45 CFR 164.530(j)(2)",
        "Administrative requirements: documentation",
        None,
        "(2) Standard: Retention period. A covered entity must retain the documentation required by paragraph "
        "(j)(1) of this section for six years from the date of its creation or the date when it last was in "
        "effect, whichever is later.",
    ),
    "C07": (
        "45 CFR 164.530(a)(1)",
        "Administrative requirements: personnel designations",
        None,
        "(a)(1) Standard: Personnel designations. (i) A covered entity must designate a privacy official who is "
        "responsible for the development and implementation of the policies and procedures of the entity. "
        "(ii) A covered entity must designate a contact person or office who is responsible for receiving "
        "complaints under this section and who is able to provide further information about matters covered "
        "by the notice required by § 164.520.",
    ),
    "C08": (
        "45 CFR 164.530(b)(1)",
        "Administrative requirements: training",
        None,
        "(b)(1) Standard: Training. A covered entity must train all members of its workforce on the policies and "
        "procedures with respect to protected health information required by this subpart and subpart D of this "
        "part, as necessary and appropriate for the members of the workforce to carry out their functions "
        "within the covered entity.",
    ),
    "C09": (
        "45 CFR 164.530(d)(1)",
        "Administrative requirements: complaints to the covered entity",
        None,
        "(d)(1) Standard: Complaints to the covered entity. A covered entity must provide a process for "
        "individuals to make complaints concerning the covered entity's policies and procedures required by "
        "this subpart and subpart D of this part or its compliance with such policies and procedures or the "
        "requirements of this subpart or subpart D of this part.",
    ),
    "C10": (
        "45 CFR 164.530(e)(1)",
        "Administrative requirements: sanctions",
        None,
        "(e)(1) Standard: Sanctions. A covered entity must have and apply appropriate sanctions against members "
        "of its workforce who fail to comply with the privacy policies and procedures of the covered entity or "
        "the requirements of this subpart or subpart D of this part.",
    ),
    "C11": (
        "45 CFR 164.530(g)",
        "Administrative requirements: refraining from intimidating or retaliatory acts",
        None,
        "(g) Standard: Refraining from intimidating or retaliatory acts. A covered entity— (1) May not "
        "intimidate, threaten, coerce, discriminate against, or take other retaliatory action against any "
        "individual for the exercise by the individual of any right established, or for participation in any "
        "process provided for, by this subpart or subpart D of this part, including the filing of a complaint "
        "under this section;",
    ),
    "C12": (
        "45 CFR 164.530(h)",
        "Administrative requirements: waiver of rights",
        None,
        "(h) Standard: Waiver of rights. A covered entity may not require individuals to waive their rights "
        "under § 160.306 of this subchapter, this subpart, or subpart D of this part, as a condition of the "
        "provision of treatment, payment, enrollment in a health plan, or eligibility for benefits.",
    ),
    "C13": (
        "45 CFR 164.530(c)(1)",
        "Administrative requirements: safeguards",
        None,
        "(c)(1) Standard: Safeguards. A covered entity must have in place appropriate administrative, technical, "
        "and physical safeguards to protect the privacy of protected health information.",
    ),
    "C14": (
        "45 CFR 164.502(b)(1)",
        "Uses and disclosures: minimum necessary",
        None,
        "(b) Standard: Minimum necessary—(1) Minimum necessary applies. When using or disclosing protected "
        "health information or when requesting protected health information from another covered entity or "
        "business associate, a covered entity or business associate must make reasonable efforts to limit "
        "protected health information to the minimum necessary to accomplish the intended purpose of the use, "
        "disclosure, or request.",
    ),
    "C15": (
        "45 CFR 164.502(f)",
        "Uses and disclosures: deceased individuals",
        None,
        "(f) Standard: Deceased individuals. A covered entity must comply with the requirements of this subpart "
        "with respect to the protected health information of a deceased individual for a period of 50 years "
        "following the death of the individual.",
    ),
    "C16": (
        "45 CFR 164.508(a)(1)",
        "Uses and disclosures for which an authorization is required",
        None,
        "(a) Standard: Authorizations for uses and disclosures—(1) Authorization required: General rule. Except "
        "as otherwise permitted or required by this subchapter, a covered entity may not use or disclose "
        "protected health information without an authorization that is valid under this section.",
    ),
    "C17": (
        "45 CFR 164.508(b)(6)",
        "Authorizations: documentation",
        None,
        "(6) Documentation. A covered entity must document and retain any signed authorization under this "
        "section as required by § 164.530(j).",
    ),
    "C18": (
        "45 CFR 164.404(b)",
        "Notification to individuals: timeliness",
        None,
        "(b) Implementation specification: Timeliness of notification. Except as provided in § 164.412, a "
        "covered entity shall provide the notification required by paragraph (a) of this section without "
        "unreasonable delay and in no case later than 60 calendar days after discovery of a breach.",
    ),
    "C19": (
        "45 CFR 164.406(a)",
        "Notification to the media",
        None,
        "(a) Standard. For a breach of unsecured protected health information involving more than 500 residents "
        "of a State or jurisdiction, a covered entity shall, following the discovery of the breach as provided "
        "in § 164.404(a)(2), notify prominent media outlets serving the State or jurisdiction.",
    ),
    "C20": (
        "45 CFR 164.408(c)",
        "Notification to the Secretary: breaches involving less than 500 individuals",
        None,
        "(c) Implementation specifications: Breaches involving less than 500 individuals. For breaches of "
        "unsecured protected health information involving less than 500 individuals, a covered entity shall "
        "maintain a log or other documentation of such breaches and, not later than 60 days after the end of "
        "each calendar year, provide the notification required by paragraph (a) of this section for breaches "
        "discovered during the preceding calendar year, in the manner specified on the HHS web site.",
    ),
    "C21": (
        "45 CFR 164.410(b)(1)",
        "Notification by a business associate: timeliness",
        None,
        "(b) Implementation specifications: Timeliness of notification. (1) Except as provided in § 164.412, a "
        "business associate shall provide the notification required by paragraph (a) of this section without "
        "unreasonable delay and in no case later than 60 calendar days after discovery of a breach.",
    ),
    "C22": (
        "45 CFR 164.404(d)(2)(ii)",
        "Notification to individuals: substitute notice",
        None,
        "(ii) In the case in which there is insufficient or out-of-date contact information for 10 or more "
        "individuals, then such substitute notice shall: (A) Be in the form of either a conspicuous posting for "
        "a period of 90 days on the home page of the Web site of the covered entity, or conspicuous notice in "
        "major print or broadcast media in geographic areas where the individuals affected by the breach likely "
        "reside; and (B) Include a toll-free phone number that remains active for at least 90 days where an "
        "individual can learn whether the individual's unsecured protected health information may be included "
        "in the breach.",
    ),
    "C23": (
        "45 CFR 164.316(b)(2)(i)",
        "Security Rule: documentation, time limit",
        None,
        "(2) Implementation specifications: (i) Time limit (Required). Retain the documentation required by "
        "paragraph (b)(1) of this section for 6 years from the date of its creation or the date when it last "
        "was in effect, whichever is later.",
    ),
    "C24": (
        "45 CFR 164.312(b)",
        "Security Rule: audit controls",
        None,
        "(b) Standard: Audit controls. Implement hardware, software, and/or procedural mechanisms that record "
        "and examine activity in information systems that contain or use electronic protected health "
        "information.",
    ),
    "C25": (
        "45 CFR 164.530(i)(1)",
        "Administrative requirements: policies and procedures",
        None,
        "(i)(1) Standard: Policies and procedures. A covered entity must implement policies and procedures with "
        "respect to protected health information that are designed to comply with the standards, "
        "implementation specifications, or other requirements of this subpart and subpart D of this part.",
    ),
    "C26": (
        "45 CFR 164.312(a)(1)",
        "Security Rule: access control",
        None,
        "(a)(1) Standard: Access control. Implement technical policies and procedures for electronic "
        "information systems that maintain electronic protected health information to allow access only to "
        "those persons or software programs that have been granted access rights as specified in "
        "§ 164.308(a)(4).",
    ),
    # A synthetic organisation's policy (not regulation): written for the demo, in conflict with the rule.
    "P01": (
        "Example Health Network Privacy Policy (synthetic)",
        "4.2 Access requests",
        3,
        "4.2 Access requests. The Privacy Office must act on a patient's request for access no later than 15 "
        "days after receipt of the request, and must record the date of each decision in the request log.",
    ),
    "P02": (
        "Example Health Network Privacy Policy (synthetic)",
        "7.1 Record retention",
        5,
        "7.1 Record retention. The Privacy Office must retain the documentation of its privacy policies for ten "
        "years from the date of its creation or the date when it last was in effect, whichever is later.",
    ),
    "P03": (
        "Example Health Network Privacy Policy (synthetic)",
        "9.3 Breach notification",
        8,
        "9.3 Breach notification. The Privacy Office must provide the notification to affected individuals "
        "without unreasonable delay and in no case later than 30 calendar days after discovery of a breach.",
    ),
}
