"""Find a snapshot's license as an SPDX id, from package metadata first, then LICENSE files."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

_CLASSIFIERS = {
    "MIT License": "MIT",
    "Apache Software License": "Apache-2.0",
    "BSD License": "BSD-3-Clause",
    "ISC License (ISCL)": "ISC",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "Python Software Foundation License": "PSF-2.0",
    "GNU General Public License v3 (GPLv3)": "GPL-3.0-only",
    "GNU General Public License v2 (GPLv2)": "GPL-2.0-only",
    "GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0-only",
    "The Unlicense (Unlicense)": "Unlicense",
}
# Distinctive phrases of license texts, checked in order (the first match wins).
_TEXTS = (
    ("Apache License", "Apache-2.0"),
    ("Mozilla Public License", "MPL-2.0"),
    ("GNU LESSER GENERAL PUBLIC LICENSE", "LGPL-3.0-only"),
    ("GNU GENERAL PUBLIC LICENSE", "GPL-3.0-only"),
    ("Permission is hereby granted, free of charge", "MIT"),
    ("Redistribution and use in source and binary forms", "BSD-3-Clause"),
    ("Permission to use, copy, modify, and/or distribute", "ISC"),
    ("This is free and unencumbered software", "Unlicense"),
    ("PYTHON SOFTWARE FOUNDATION LICENSE", "PSF-2.0"),
)
_SPDX_LIKE = re.compile(r"^[A-Za-z0-9.+-]+( (AND|OR|WITH) [A-Za-z0-9.+-]+)*$")
_SHORT_NAMES = {"mit": "MIT", "bsd": "BSD-3-Clause", "apache 2.0": "Apache-2.0",
                "apache-2.0": "Apache-2.0", "apache license 2.0": "Apache-2.0",
                "isc": "ISC", "mpl-2.0": "MPL-2.0", "psf": "PSF-2.0"}


def _from_string(value: str) -> str | None:
    value = value.strip()
    if value.lower() in _SHORT_NAMES:
        return _SHORT_NAMES[value.lower()]
    for phrase, spdx in _TEXTS:
        if phrase.lower() in value.lower():
            return spdx
    if _SPDX_LIKE.match(value) and len(value) < 60:
        return value
    return None


def detect_license(root: Path) -> str | None:
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
            spdx = _classifier(classifier)
            if spdx:
                return spdx
    pkg_info = root / "PKG-INFO"
    if pkg_info.is_file():
        for line in pkg_info.read_text(errors="replace").splitlines():
            if line.startswith("License-Expression:"):
                return line.split(":", 1)[1].strip() or None
            if line.startswith("Classifier:") and _classifier(line.split(":", 1)[1]):
                return _classifier(line.split(":", 1)[1])
    for name in sorted(p.name for p in root.iterdir() if p.is_file()):
        if name.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
            text = (root / name).read_text(errors="replace")[:4000]
            for phrase, spdx in _TEXTS:
                if phrase.lower() in text.lower():
                    return spdx
    return None


def _classifier(classifier: str) -> str | None:
    tail = classifier.strip().split("::")[-1].strip()
    return _CLASSIFIERS.get(tail)
