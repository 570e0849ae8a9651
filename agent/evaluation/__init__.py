"""Measuring bots: matches (``match``), exact exploitability (``evaluate``), strategy providers
(``policies``), local best response (``lbr``), AIVAT (``aivat``, ``aivat_log``), confidence intervals
(``stats``) and PNG reports (``plots``)."""
