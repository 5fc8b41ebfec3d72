"""`python -m taskforge.sandbox check|prepare|prune [--images]`: the sandboxes of this machine.

check    each backend: available, or why not (exit 1 when none but `none` is)
prepare  build what the docker backend needs (its base image) now rather than on first use
prune    remove containers and scratch directories crashed runs left behind (and with
         --images the base, interpreter and environment images taskforge built)
"""

from __future__ import annotations

import argparse
import sys

from taskforge.sandbox import BACKENDS, prune, status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m taskforge.sandbox",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("check", "prepare", "prune"))
    parser.add_argument("--images", action="store_true", help="prune: the images taskforge built too")
    args = parser.parse_args(argv)
    if args.action == "check":
        found = status()
        for name, why in found.items():
            print(f"{name:7s} {'available' if why is None else 'unavailable: ' + why}")
        return 0 if any(why is None for name, why in found.items() if name != "none") else 1
    if args.action == "prepare":
        from taskforge.sandbox.base import SandboxUnavailable

        docker = BACKENDS["docker"]
        why = docker.why_unavailable()  # type: ignore[attr-defined]
        if why is not None:
            print(f"docker: {why}", file=sys.stderr)
            return 1
        try:
            image = docker().image()  # type: ignore[attr-defined]
        except SandboxUnavailable as e:
            print(f"docker: {e}", file=sys.stderr)
            return 1
        print(f"docker: image {image[:19]} ready")
        return 0
    from taskforge.cache import cache_root
    from taskforge.workspace import prune_dead_scratch

    removed = prune(images=args.images)
    scratch = prune_dead_scratch(cache_root())
    print(f"removed {removed['containers']} containers, {removed['images']} images, "
          f"{scratch} scratch directories of dead runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
