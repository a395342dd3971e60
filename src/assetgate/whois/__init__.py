"""Interface D, whois: domain normalisation, RDAP and port-43 lookups with referrals, and the
parsers that turn a registry's answer into one record (docs/whois.md).
"""
