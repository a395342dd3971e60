"""Non-answers: "not found", quota banners, unsupported TLDs (pure).

These must be classified, not parsed: a quota banner parsed as data gives a record full of
``None`` that looks like an unregistered domain (richardpenman/whois#251,
joepie91/python-whois#69). Patterns are only consulted when the answer holds no domain data,
so a registry footer that happens to say "not found" cannot hide a real record.
"""

from __future__ import annotations

import re
from typing import Final, Literal

Verdict = Literal["not_found", "rate_limited", "unsupported"]

_NOT_FOUND: Final = re.compile(
    r"""^[\s%#*]*(?:
        no\s+match | not\s+found | no\s+entries\s+found | no\s+data\s+found
      | no\s+matching\s+record | no\s+such\s+domain | domain\s+not\s+found
      | nothing\s+found | no\s+information\s+available | object\s+does\s+not\s+exist
      | the\s+queried\s+object\s+does\s+not\s+exist | this\s+query\s+returned\s+0\s+objects
      | status:\s*(?:free|available|not\s+registered)\s*$
      | .*\bis\s+(?:available\s+for\s+registration|not\s+registered|free)\b
      | no\s+data\s+was\s+found | not\s+registered\s+- | domain\s+status:\s*available\s*$
      | domain\s+"[^"]+"\s+not\s+found | .*\bdomain\s+name\s+not\s+known\b
      | .*\bis\s+not\s+a\s+registered\b
      | we\s+do\s+not\s+have\s+an\s+entry\b
      | (?:error:?\s*(?:\d+\s+)?)(?:no\s+entries\s+found|no\s+objects?\s+found)
      | (?:domain\s+status:\s*)?no\s+object\s+found | no\s+objects?\s+found
      | object\s+"[^"]*"\s+not\s+found | "[^"]+"\s+not\s+found
      | no\s+(?:domain\s+)?records?\s+(?:were\s+)?(?:found|matching)
      | (?:unfortunately,?\s+)?no\s+results?\s+(?:were\s+)?found
      | .*\bdomain\s+\S+\s+(?:was\s+)?not\s+(?:found|registred|registered)\b
      | .*\bhas\s+not\s+been\s+registered\b | .*\bno\s+match\b | .*:\s*no\s+existe\b
      | .*\bdoes\s+not\s+exist\s+in\s+(?:the\s+)?database\b | no\s+found\b
      | no_se_encontro_el_objeto | key\s+not\s+found | query_status:\s*220\s+available
      | .*\bis\s+available(?:\s+for\s+purchase)?\s*\.?\s*$
      | status:\s*available\b | there\s+is\s+no\s+information\s+available\s+on\s+the\s+domain
      | this\s+domain\s+is\s+not\s+available\s+in\s+our\s+whois\s+database
    )""",
    re.IGNORECASE | re.MULTILINE | re.VERBOSE,
)
_RATE_LIMITED: Final = re.compile(
    r"""(?:exceeded\s+(?:the\s+|your\s+)?(?:\w+\s+){0,2}(?:limit|quota)
      | (?:query|request|rate|connection|access)[\s-]+limit\s+(?:exceeded|reached)
      | access\s+control\s+limit\s+reached
      | (?:quota|limit)\s+(?:has\s+been\s+|was\s+|is\s+)?(?:exceeded|reached)
      | blacklisted | too\s+many\s+(?:requests|queries|connections)
      | try\s+again\s+later | temporarily\s+(?:blocked|denied)
      | maximum\s+(?:number\s+of\s+)?quer(?:y|ies)
      | ^[\s%#*]*excessive\s+quer(?:y|ying|ies)  # a banner, not "make excessive queries"
    )""",
    re.IGNORECASE | re.VERBOSE | re.MULTILINE,
)
_UNSUPPORTED: Final = re.compile(
    r"tld\s+is\s+not\s+supported|no\s+whois\s+server\s+is\s+known|whois\s+service\s+is\s+not\s+"
    r"(?:available|provided)",
    re.IGNORECASE,
)


def classify(text: str) -> Verdict | None:
    """What a data-less answer means; ``None`` when it is none of the known non-answers."""
    # Rate limits first: a throttled AFNIC answer also says "No entries found".
    if _RATE_LIMITED.search(text):
        return "rate_limited"
    if _NOT_FOUND.search(text):
        return "not_found"
    if _UNSUPPORTED.search(text):
        return "unsupported"
    return None
