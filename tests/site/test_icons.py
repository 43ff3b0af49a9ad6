"""course_site.icons: a favicon keeps only its small images, each byte for byte."""

from __future__ import annotations

import pytest

from course_site.icons import ENTRY, HEADER, IconError, small_icon


def _icon(*images: tuple[int, bytes]) -> bytes:
    """An .ico of square images (side, data); side 256 is written as 0, as the format says."""
    start = HEADER.size + len(images) * ENTRY.size
    head, body = [HEADER.pack(0, 1, len(images))], b""
    for side, data in images:
        head.append(ENTRY.pack(side % 256, side % 256, 0, 0, 1, 32, len(data),
                               start + len(body)))
        body += data
    return b"".join(head) + body


def _images(ico: bytes) -> dict[int, bytes]:
    count = HEADER.unpack_from(ico)[2]
    found = {}
    for i in range(count):
        width, _, _, _, _, _, size, offset = ENTRY.unpack_from(ico, HEADER.size + i * ENTRY.size)
        found[width or 256] = ico[offset:offset + size]
    return found


def test_only_the_small_images_are_kept_unchanged() -> None:
    images = [(256, b"\x89PNG big"), (16, b"sixteen"), (192, b"x" * 500), (64, b"sixty-four")]
    small = small_icon(_icon(*images))
    assert _images(small) == {16: b"sixteen", 64: b"sixty-four"}
    assert len(small) == HEADER.size + 2 * ENTRY.size + len(b"sixteen" + b"sixty-four")
    assert _images(small_icon(_icon(*images), largest=256)) == dict(images)


@pytest.mark.parametrize(("data", "message"), [
    (b"\0\0", "6-byte header"),
    (b"\x89PNG\r\n\x1a\n" + b"\0" * 30, r"header starts with 0, 1 \(got 20617, 18254\)"),
    (HEADER.pack(0, 1, 3) + b"\0" * 16, "announces 3 images"),
    (HEADER.pack(0, 1, 1) + ENTRY.pack(16, 16, 0, 0, 1, 32, 99, 22) + b"abc",
     r"image 0 \(16x16\) lies at bytes 22-121, past the end of the file \(25 bytes\)"),
])
def test_what_is_not_an_icon_is_named(data: bytes, message: str) -> None:
    with pytest.raises(IconError, match=message):
        small_icon(data)


def test_an_icon_with_only_large_images_is_refused() -> None:
    with pytest.raises(IconError, match="no image of 64 pixels or less"):
        small_icon(_icon((128, b"big")))

def test_header_and_entries_have_the_formats_sizes() -> None:
    """Microsoft's "Icons" documentation: a 6-byte ICONDIR, 16-byte ICONDIRENTRY records."""
    assert (HEADER.size, ENTRY.size) == (6, 16)
