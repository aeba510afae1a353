"""Make ``sim/templates/cjk-subset.woff``: Noto Sans CJK JP (SIL Open Font License 1.1) cut down to the Japanese
characters the project's pages use, so that every report draws its Japanese terms without a CJK font installed.

Run after adding a Japanese term to the code or an example (``tests/test_designer_read3_pages.py`` fails until
then): ``python tools/cjk_font.py [SOURCE_FONT]``. The source is Debian's fonts-noto-cjk
(``/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc``, its Japanese face). fontTools (a dependency of
matplotlib) does the subsetting; the flavour is WOFF (zlib), which needs no further library."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "sim" / "templates" / "cjk-subset.woff"
SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
JP_FACE = "Noto Sans CJK JP"


def project_characters() -> str:
    """Every CJK character (and CJK punctuation) in the package's code and the example scenarios."""
    chars: set[str] = set()
    for path in [*sorted((ROOT / "sim").rglob("*.py")), *sorted((ROOT / "scenarios").rglob("*.toml"))]:
        chars |= {c for c in path.read_text(encoding="utf-8") if is_cjk(c)}
    return "".join(sorted(chars))


def is_cjk(c: str) -> bool:
    return 0x3000 <= ord(c) <= 0x30FF or 0x3400 <= ord(c) <= 0x9FFF or 0xFF00 <= ord(c) <= 0xFFEF


def _japanese_face(source: Path) -> int:
    from fontTools.ttLib import TTCollection

    for i, font in enumerate(TTCollection(str(source)).fonts):
        if font["name"].getDebugName(1) == JP_FACE:
            return i
    raise SystemExit(f"{source}: no {JP_FACE!r} face")


def main(argv: list[str]) -> int:
    from fontTools import subset

    source = Path(argv[0]) if argv else SOURCE
    if not source.is_file():
        print(f"{source}: not found (apt-get install fonts-noto-cjk)", file=sys.stderr)
        return 2
    text = project_characters()
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = []  # no vertical forms or alternates: the pages set horizontal text
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]  # keep the copyright and the license (OFL) in the file
    options.desubroutinize = True
    from fontTools.ttLib import TTFont

    font = TTFont(str(source), fontNumber=_japanese_face(source), lazy=False)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text)
    subsetter.subset(font)
    subset.save_font(font, str(OUT), options)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(text)} characters, {OUT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
