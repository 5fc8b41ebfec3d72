"""Java class files as the leak scanner reads them: the constant pool (class, method and field
names, descriptors, string constants), each method's code with its line number and local
variable tables, and a structural check that tells a compiled copy of a deleted method from
its stub.

A decompiler rebuilds a method from exactly these parts, so a `.class` compiled from the
original (in the workspace, a build directory, the local Maven repository, a jar, a jar in a
zip) is residue of the deletion. Two checks find one:

- text: `class_text` renders the names, descriptors, string constants (modified UTF-8
  decoded), local variable names and line ranges of every method as plain lines, which the
  text fingerprints of the deleted lines (identifiers, literals) are searched in;
- structure: a method of the deleted method's class, name and parameter types whose code is
  more than a stub (`Method.is_stub`) is the original body compiled (`java_fingerprints`
  name them; `scan.Scanner` matches them).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

MAGIC = b"\xca\xfe\xba\xbe"
PRIMITIVES = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long",
              "S": "short", "Z": "boolean", "V": "void"}
ATHROW = 0xBF
NEW = 0xBB
# A stub's code: new, dup, ldc (ldc_w), invokespecial, athrow: 10 (11) bytes; a trivial body's
# (`return null;`, `return 0L;`, `return;`): 2 bytes at most.
STUB_CODE = 11
TRIVIAL_CODE = 2


class ClassFormatError(ValueError):
    pass


@dataclass
class Method:
    name: str
    descriptor: str
    code: bytes = b""
    lines: list[int] = field(default_factory=list)
    locals: list[str] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)  # constants its code loads (ldc)

    @property
    def parameters(self) -> list[str]:
        """Simple names of the parameter types: `(JLjava/math/BigDecimal;[I)V` -> `long`,
        `BigDecimal`, `int[]`."""
        return parameter_names(self.descriptor)

    def is_stub(self) -> bool:
        """Nothing but a throw of a new exception (`new; dup; ldc; invokespecial; athrow`),
        or a trivial return (`aconst_null; areturn`, `iconst_0; ireturn`, `return`, ...):
        what a task state or a trivial solution compiles to, never a real body."""
        code = self.code
        return len(code) <= TRIVIAL_CODE or (
            len(code) <= STUB_CODE and code[0] == NEW and code[-1] == ATHROW)


@dataclass
class ClassInfo:
    name: str  # binary name with slashes: `javademo/money/Money$Formatting`
    source_file: str = ""
    methods: list[Method] = field(default_factory=list)
    utf8: list[str] = field(default_factory=list)


def is_class(data: bytes) -> bool:
    """A class file: the magic, then a major version of Java 1.1 to 26 (a Mach-O universal
    binary shares the magic, followed by a small architecture count instead)."""
    return len(data) >= 10 and data[:4] == MAGIC and 45 <= int.from_bytes(data[6:8], "big") <= 70


def _mutf8(raw: bytes) -> str:
    """Modified UTF-8 (NUL as C0 80, supplementary characters as surrogate pairs)."""
    text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    try:
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return text


def parameter_names(descriptor: str) -> list[str]:
    inside = descriptor[1:descriptor.index(")")] if descriptor.startswith("(") else ""
    names, i, dims = [], 0, 0
    while i < len(inside):
        ch = inside[i]
        if ch == "[":
            dims += 1
            i += 1
            continue
        if ch == "L":
            end = inside.index(";", i)
            name = inside[i + 1:end].rsplit("/", 1)[-1].rsplit("$", 1)[-1]
            i = end + 1
        else:
            name = PRIMITIVES.get(ch, ch)
            i += 1
        names.append(name + "[]" * dims)
        dims = 0
    return names


def parse_class(data: bytes) -> ClassInfo:
    """The parts of a class file the scan reads. Raises ClassFormatError when it is cut
    short or malformed."""
    try:
        return _parse(memoryview(data))
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as e:
        raise ClassFormatError(str(e)) from None


def _parse(view: memoryview) -> ClassInfo:
    pos = 8
    count = struct.unpack_from(">H", view, pos)[0]
    pos += 2
    pool: list[tuple[int, object]] = [(0, None)] * count
    i = 1
    while i < count:
        tag = view[pos]
        pos += 1
        if tag == 1:
            length = struct.unpack_from(">H", view, pos)[0]
            pool[i] = (1, _mutf8(bytes(view[pos + 2:pos + 2 + length])))
            pos += 2 + length
        elif tag in (3, 4):
            pool[i] = (tag, bytes(view[pos:pos + 4]))
            pos += 4
        elif tag in (5, 6):
            pool[i] = (tag, bytes(view[pos:pos + 8]))
            pos += 8
            i += 1
        elif tag in (7, 8, 16, 19, 20):
            pool[i] = (tag, struct.unpack_from(">H", view, pos)[0])
            pos += 2
        elif tag in (9, 10, 11, 12, 17, 18):
            pool[i] = (tag, struct.unpack_from(">HH", view, pos))
            pos += 4
        elif tag == 15:
            pool[i] = (tag, struct.unpack_from(">BH", view, pos))
            pos += 3
        else:
            raise ClassFormatError(f"constant pool tag {tag}")
        i += 1

    def utf8(index: int) -> str:
        tag, value = pool[index]
        if tag != 1:
            raise ClassFormatError(f"constant {index} is not a string")
        return str(value)

    def class_name(index: int) -> str:
        tag, value = pool[index]
        return utf8(int(value)) if tag == 7 else ""  # type: ignore[arg-type]

    _access, this_class, _super, n_interfaces = struct.unpack_from(">HHHH", view, pos)
    pos += 8 + 2 * n_interfaces
    info = ClassInfo(class_name(this_class),
                     utf8=[str(v) for t, v in pool if t == 1])

    def skip_attributes(pos: int) -> int:
        n = struct.unpack_from(">H", view, pos)[0]
        pos += 2
        for _ in range(n):
            length = struct.unpack_from(">I", view, pos + 2)[0]
            pos += 6 + length
        return pos

    n_fields = struct.unpack_from(">H", view, pos)[0]
    pos += 2
    for _ in range(n_fields):
        pos = skip_attributes(pos + 6)
    n_methods = struct.unpack_from(">H", view, pos)[0]
    pos += 2
    for _ in range(n_methods):
        _flags, name_i, desc_i, n_attrs = struct.unpack_from(">HHHH", view, pos)
        pos += 8
        method = Method(utf8(name_i), utf8(desc_i))
        for _ in range(n_attrs):
            attr_name = utf8(struct.unpack_from(">H", view, pos)[0])
            length = struct.unpack_from(">I", view, pos + 2)[0]
            body = view[pos + 6:pos + 6 + length]
            if len(body) != length:
                raise ClassFormatError("attribute cut short")
            pos += 6 + length
            if attr_name == "Code":
                _read_code(body, method, pool, utf8)
        info.methods.append(method)
    n_attrs = struct.unpack_from(">H", view, pos)[0]
    pos += 2
    for _ in range(n_attrs):
        attr_name = utf8(struct.unpack_from(">H", view, pos)[0])
        length = struct.unpack_from(">I", view, pos + 2)[0]
        if attr_name == "SourceFile":
            info.source_file = utf8(struct.unpack_from(">H", view, pos + 6)[0])
        pos += 6 + length
    return info


def _read_code(body: memoryview, method: Method, pool: list, utf8) -> None:
    code_length = struct.unpack_from(">I", body, 4)[0]
    method.code = bytes(body[8:8 + code_length])
    pos = 8 + code_length
    n_exceptions = struct.unpack_from(">H", body, pos)[0]
    pos += 2 + 8 * n_exceptions
    n_attrs = struct.unpack_from(">H", body, pos)[0]
    pos += 2
    for _ in range(n_attrs):
        name = utf8(struct.unpack_from(">H", body, pos)[0])
        length = struct.unpack_from(">I", body, pos + 2)[0]
        attr = body[pos + 6:pos + 6 + length]
        pos += 6 + length
        if name == "LineNumberTable":
            n = struct.unpack_from(">H", attr, 0)[0]
            method.lines = sorted({struct.unpack_from(">HH", attr, 2 + 4 * k)[1]
                                   for k in range(n)})
        elif name in ("LocalVariableTable", "LocalVariableTypeTable"):
            n = struct.unpack_from(">H", attr, 0)[0]
            for k in range(n):
                name_i = struct.unpack_from(">H", attr, 2 + 10 * k + 4)[0]
                method.locals.append(utf8(name_i))
    # string constants the code loads: ldc (0x12), ldc_w (0x13) of a String
    code = method.code
    for k, op in enumerate(code):
        index = None
        if op == 0x12 and k + 1 < len(code):
            index = code[k + 1]
        elif op == 0x13 and k + 2 < len(code):
            index = int.from_bytes(code[k + 1:k + 3], "big")
        if index is not None and 0 < index < len(pool) and pool[index][0] == 8:
            try:
                method.strings.append(utf8(int(pool[index][1])))
            except ClassFormatError:
                continue


def class_text(info: ClassInfo) -> bytes:
    """What a decompiler would tell a reader, as lines of text: the class, each method with
    its descriptor, line range, local variables and string constants, then every string of
    the constant pool."""
    out = [f"class {info.name.replace('/', '.')} ({info.source_file})"]
    for m in info.methods:
        span = f"{m.lines[0]}-{m.lines[-1]}" if m.lines else "-"
        out.append(f"method {m.name}{m.descriptor} lines {span} code {len(m.code)} bytes")
        if m.locals:
            out.append("  locals " + " ".join(m.locals))
        out += [f"  string {s}" for s in m.strings]
    out += info.utf8
    return "\n".join(out).encode("utf-8", "surrogatepass")


# -- what a deletion's fingerprint names -------------------------------------------------------


JAVA_PREFIX = "java:"


def java_key(binary_name: str, method: str) -> str:
    """The fingerprint key of a deleted method: `java:javademo.money.Money$Inner#plus`."""
    return f"{JAVA_PREFIX}{binary_name.replace('/', '.')}#{method}"


def matches(fingerprint_params: str, method: Method) -> bool:
    """Whether the method's parameter types are the fingerprint's (`long,BigDecimal`; `?`
    stands for a type variable, whose erasure the source does not say)."""
    wanted = fingerprint_params.split(",") if fingerprint_params else []
    got = method.parameters
    if len(wanted) != len(got):
        return False
    for w, g in zip(wanted, got, strict=True):
        base = w.rstrip("[]")
        if w != g and not (base == "?" and g.endswith(w[len(base):]) if w != base else w == "?"):
            return False
    return True
