"""Find a snapshot's license as an SPDX expression, from package metadata first, then LICENSE
files. An answer that cannot be decided is None (unknown), never a guess: a recipe's
`select.licenses` keeps or drops sources by it."""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression

# Trove classifiers that name one license. "BSD License" is absent on purpose: it covers the
# 2-clause, 3-clause and other variants, so the LICENSE text decides.
_CLASSIFIERS = {
    "MIT License": "MIT",
    "MIT No Attribution License (MIT-0)": "MIT-0",
    "Apache Software License": "Apache-2.0",
    "ISC License (ISCL)": "ISC",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "Python Software Foundation License": "PSF-2.0",
    "GNU General Public License v3 (GPLv3)": "GPL-3.0-only",
    "GNU General Public License v3 or later (GPLv3+)": "GPL-3.0-or-later",
    "GNU General Public License v2 (GPLv2)": "GPL-2.0-only",
    "GNU General Public License v2 or later (GPLv2+)": "GPL-2.0-or-later",
    "GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0-only",
    "GNU Lesser General Public License v3 or later (LGPLv3+)": "LGPL-3.0-or-later",
    "GNU Lesser General Public License v2 (LGPLv2)": "LGPL-2.0-only",
    "GNU Lesser General Public License v2 or later (LGPLv2+)": "LGPL-2.0-or-later",
    "GNU Affero General Public License v3": "AGPL-3.0-only",
    "GNU Affero General Public License v3 or later (AGPLv3+)": "AGPL-3.0-or-later",
    "The Unlicense (Unlicense)": "Unlicense",
    "Zope Public License": "ZPL-2.1",
    "Eclipse Public License 2.0 (EPL-2.0)": "EPL-2.0",
    "Boost Software License 1.0 (BSL-1.0)": "BSL-1.0",
}
# The GNU licenses: (family phrase, SPDX stem), the most specific first (the AGPL and LGPL
# texts also mention the GPL). The version comes from the text's own "Version N" line.
_GNU = (("GNU AFFERO GENERAL PUBLIC LICENSE", "AGPL"),
        ("GNU LESSER GENERAL PUBLIC LICENSE", "LGPL"),
        ("GNU LIBRARY GENERAL PUBLIC LICENSE", "LGPL"),
        ("GNU GENERAL PUBLIC LICENSE", "GPL"))
_GNU_VERSION = re.compile(r"Version (\d(?:\.\d)?),", re.IGNORECASE)
_OR_LATER = re.compile(r"or\s+\(at\s+your\s+option\)\s+any\s+later\s+version", re.IGNORECASE)
# Distinctive phrases of other license texts, checked in order (the first match wins).
_TEXTS = (
    ("Apache License", "Apache-2.0"),
    ("Mozilla Public License", "MPL-2.0"),
    ("Permission is hereby granted, free of charge", "MIT"),
    ("Permission to use, copy, modify, and/or distribute", "ISC"),
    ("This is free and unencumbered software", "Unlicense"),
    ("PYTHON SOFTWARE FOUNDATION LICENSE", "PSF-2.0"),
)
_BSD = "Redistribution and use in source and binary forms"
_BSD_THIRD_CLAUSE = re.compile(r"Neither\s+the\s+name", re.IGNORECASE)
# Names people write instead of an SPDX id, each naming one license.
_SHORT_NAMES = {"mit license": "MIT", "the mit license": "MIT", "apache 2.0": "Apache-2.0",
                "apache license 2.0": "Apache-2.0", "apache license, version 2.0": "Apache-2.0",
                "apache software license": "Apache-2.0", "apache 2": "Apache-2.0",
                "psf": "PSF-2.0", "bsd-3": "BSD-3-Clause", "bsd 3-clause": "BSD-3-Clause",
                "new bsd": "BSD-3-Clause", "new bsd license": "BSD-3-Clause",
                "bsd-2": "BSD-2-Clause", "bsd 2-clause": "BSD-2-Clause",
                "simplified bsd": "BSD-2-Clause", "gplv3": "GPL-3.0-only",
                "gplv3+": "GPL-3.0-or-later", "gplv2": "GPL-2.0-only",
                "gplv2+": "GPL-2.0-or-later", "lgplv3": "LGPL-3.0-only",
                "lgplv3+": "LGPL-3.0-or-later", "mpl 2.0": "MPL-2.0"}
# SPDX ids the list has deprecated, as their current equivalents.
_DEPRECATED = re.compile(r"\b(A?GPL|LGPL)-(\d\.\d)(\+?)(?![-\w])")


def spdx_expression(value: str) -> str | None:
    """`value` as a canonical SPDX expression, or None when it is not one (`BSD`, `GPLv3`,
    `MIT License`); deprecated GNU ids become their -only/-or-later forms."""
    value = value.strip()
    if not value or len(value) > 200:
        return None
    try:
        canonical = canonicalize_license_expression(value)
    except InvalidLicenseExpression:
        return None
    return _DEPRECATED.sub(lambda m: f"{m[1]}-{m[2]}-{'or-later' if m[3] else 'only'}",
                           canonical)


def _from_text(text: str) -> str | None:
    """The license a full license text (or a long notice) is, or None."""
    upper = text.upper()
    for phrase, stem in _GNU:
        if phrase in upper:
            version = _GNU_VERSION.search(text)
            if not version:
                return None  # a GNU license without its version: not decidable
            number = version[1] if "." in version[1] else f"{version[1]}.0"
            # The license text alone cannot say "only" or "or later"; a project's notice can.
            # The text's own appendix shows a sample notice with "or later": cut it off.
            terms = re.split(r"END OF TERMS AND CONDITIONS|How to Apply These Terms", text,
                             maxsplit=1, flags=re.IGNORECASE)[0]
            return f"{stem}-{number}-{'or-later' if _OR_LATER.search(terms) else 'only'}"
    for phrase, spdx in _TEXTS:
        if phrase.lower() in text.lower():
            return spdx
    if _BSD.lower() in text.lower():
        return "BSD-3-Clause" if _BSD_THIRD_CLAUSE.search(text) else "BSD-2-Clause"
    return None


def _from_string(value: str) -> str | None:
    """A metadata license field: an SPDX expression, a common name, or a license text."""
    value = value.strip()
    if value.lower() in _SHORT_NAMES:
        return _SHORT_NAMES[value.lower()]
    return spdx_expression(value) or (_from_text(value) if len(value) > 40 else None)


def _classifier(classifier: str) -> str | None:
    tail = classifier.strip().split("::")[-1].strip()
    return _CLASSIFIERS.get(tail)


def _from_metadata(root: Path) -> str | None:
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(errors="replace")).get("project", {})
        except tomllib.TOMLDecodeError:
            project = {}
        lic = project.get("license")
        if isinstance(lic, str) and _from_string(lic):
            return _from_string(lic)
        if isinstance(lic, dict) and isinstance(lic.get("text"), str) and _from_string(lic["text"]):
            return _from_string(lic["text"])
        for classifier in project.get("classifiers", []):
            if isinstance(classifier, str) and _classifier(classifier):
                return _classifier(classifier)
    pkg_info = root / "PKG-INFO"
    if pkg_info.is_file():
        lines = pkg_info.read_text(errors="replace").split("\n\n", 1)[0].splitlines()
        fields = [(k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in lines)]
        for key, value in fields:
            if key == "License-Expression" and spdx_expression(value):
                return spdx_expression(value)
        for key, value in fields:
            if key == "License" and _from_string(value):
                return _from_string(value)
            if key == "Classifier" and _classifier(value):
                return _classifier(value)
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(setup_cfg)
            value = parser.get("metadata", "license", fallback="")
        except configparser.Error:
            value = ""
        if _from_string(value):
            return _from_string(value)
    return None


def detect_license(root: Path) -> str | None:
    found = _from_metadata(root)
    if found:
        return found
    for name in sorted(p.name for p in root.iterdir() if p.is_file()):
        if name.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
            spdx = _from_text((root / name).read_text(errors="replace")[:200_000])
            if spdx:
                return spdx
    return None


def license_allowed(expression: str | None, allowed: tuple[str, ...]) -> bool:
    """Whether a source under `expression` may be used when `allowed` ids are: one choice of
    an OR expression made only of allowed ids. Parentheses are not resolved: such an
    expression passes only when written exactly in `allowed` (an undecided case is a no)."""
    if expression is None:
        return False
    if expression in allowed:
        return True
    if "(" in expression or " WITH " in expression:
        return False
    return any(all(part in allowed for part in choice.split(" AND "))
               for choice in expression.split(" OR "))
