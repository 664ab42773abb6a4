"""The facts about an ELF file's dynamic symbols build.py needs, read with struct (no
binutils on the machine that builds the bundle): which glibc versions the loader will
insist on; marking a version reference no symbol uses any more as weak (the loader then
lets a glibc without it load the file, as ld does for weak references); and marking an
undefined symbol weak (a glibc without it binds it to 0 instead of refusing the file)."""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

SHT_DYNSYM = 11
SHT_GNU_VERNEED = 0x6FFFFFFE
SHT_GNU_VERSYM = 0x6FFFFFFF
VER_FLG_WEAK = 0x2
STB_WEAK = 2


def _sections(data: bytes) -> list[tuple[int, int, int, int]]:
    """(type, offset, size, link) of each section of an ELF64 little-endian file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    return [struct.unpack_from("<4xI16xQQI", data, shoff + i * shentsize)
            for i in range(shnum)]


def _of_type(sections: list[tuple[int, int, int, int]], kind: int
             ) -> tuple[int, int, int, int] | None:
    return next((s for s in sections if s[0] == kind), None)


def _needs(data: bytes) -> Iterator[tuple[int, str, int, int]]:
    """(offset of vna_flags, version name, flags, version index) of each reference."""
    sections = _sections(data)
    verneed = _of_type(sections, SHT_GNU_VERNEED)
    if verneed is None:
        return
    _, offset, _, link = verneed
    strings = sections[link][1]

    def name(at: int) -> str:
        end = data.index(b"\0", strings + at)
        return data[strings + at:end].decode()

    need = offset
    while True:
        _, count, _, aux, following = struct.unpack_from("<HHIII", data, need)
        entry = need + aux
        for _ in range(count):
            _, flags, other, vname, after = struct.unpack_from("<IHHII", data, entry)
            yield entry + 4, name(vname), flags, other
            entry += after
        if not following:
            return
        need += following


def glibc_versions(path: Path) -> set[tuple[int, ...]]:
    """The GLIBC_x.y versions the loader requires of ``path`` (weak ones excluded)."""
    found = set()
    for _, version, flags, _ in _needs(path.read_bytes()):
        match = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)+)", version)
        if match and not flags & VER_FLG_WEAK:
            found.add(tuple(int(n) for n in match[1].split(".")))
    return found


def weaken_unused_versions(path: Path) -> None:
    """Mark weak each version reference that no dynamic symbol uses."""
    data = bytearray(path.read_bytes())
    versym = _of_type(_sections(bytes(data)), SHT_GNU_VERSYM)
    if versym is None:
        return
    _, offset, size, _ = versym
    used = {v & 0x7FFF for v in struct.unpack_from(f"<{size // 2}H", data, offset)}
    for at, _, flags, index in list(_needs(bytes(data))):
        if index not in used:
            struct.pack_into("<H", data, at, flags | VER_FLG_WEAK)
    path.write_bytes(bytes(data))


def weaken_symbols(path: Path, names: set[str]) -> None:
    """Mark each undefined dynamic symbol of ``names`` weak (its binding, st_info's top
    four bits): a glibc that has no such function still loads the file."""
    data = bytearray(path.read_bytes())
    sections = _sections(bytes(data))
    dynsym = _of_type(sections, SHT_DYNSYM)
    if dynsym is None:
        return
    _, offset, size, link = dynsym
    strings = sections[link][1]
    for at in range(offset, offset + size, 24):  # Elf64_Sym
        name, info, _, shndx = struct.unpack_from("<IBBH", data, at)
        end = data.index(b"\0", strings + name)
        if shndx == 0 and data[strings + name:end].decode() in names:
            data[at + 4] = STB_WEAK << 4 | info & 0xF
    path.write_bytes(bytes(data))
