"""Favicons: keep only the sizes a browser tab shows.

JupyterLite's ``favicon.ico`` holds ten images up to 256 x 256 pixels (320 kB, most of it
uncompressed 96-192 pixel bitmaps); a browser tab draws it at 16-64 pixels. :func:`small_icon`
keeps the images up to a side length, unchanged, in a new ``.ico`` (the format: a 6-byte
header, one 16-byte entry per image, then the images; Microsoft's "Icons" documentation).
"""

from __future__ import annotations

import struct

__all__ = ["IconError", "small_icon"]

HEADER = struct.Struct("<HHH")  # reserved (0), type (1 = icon), number of images
ENTRY = struct.Struct("<BBBBHHII")  # width, height (0 = 256), colours, reserved, planes,
#                                     bits per pixel, bytes of the image, where it starts


class IconError(ValueError):
    """The bytes are not an icon (``.ico``) file this module can read."""


def small_icon(ico: bytes, largest: int = 64) -> bytes:
    """The ``.ico`` file ``ico`` with only its images of side ``largest`` pixels or less.

    The images themselves (PNG or bitmap) are copied byte for byte.

    Raises
    ------
    IconError
        If ``ico`` is not an icon file (header, entries or image data out of place), or
        has no image of side ``largest`` or less.

    >>> one = HEADER.pack(0, 1, 1) + ENTRY.pack(16, 16, 0, 0, 1, 32, 3, 22) + b"abc"
    >>> small_icon(one) == one
    True
    """
    if len(ico) < HEADER.size:
        raise IconError(f"an icon file starts with a {HEADER.size}-byte header (got "
                        f"{len(ico)} bytes)")
    reserved, kind, count = HEADER.unpack_from(ico)
    if reserved != 0 or kind != 1:
        raise IconError(f"an icon file's header starts with 0, 1 (got {reserved}, {kind})")
    if len(ico) < HEADER.size + count * ENTRY.size:
        raise IconError(f"the header announces {count} images, but the file ends inside "
                        "their entries")
    kept = []
    for i in range(count):
        entry = ENTRY.unpack_from(ico, HEADER.size + i * ENTRY.size)
        width, height, size, offset = entry[0] or 256, entry[1] or 256, entry[6], entry[7]
        if offset + size > len(ico):
            raise IconError(f"image {i} ({width}x{height}) lies at bytes {offset}-"
                            f"{offset + size}, past the end of the file ({len(ico)} bytes)")
        if max(width, height) <= largest:
            kept.append((entry, ico[offset:offset + size]))
    if not kept:
        raise IconError(f"the icon has no image of {largest} pixels or less")
    start = HEADER.size + len(kept) * ENTRY.size
    head, body = [HEADER.pack(0, 1, len(kept))], []
    for entry, image in kept:
        head.append(ENTRY.pack(*entry[:6], len(image), start + sum(map(len, body))))
        body.append(image)
    return b"".join(head + body)
