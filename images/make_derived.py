#!/usr/bin/env python3
"""Makes the derived sample images from the copied originals (see README.md).

Run from the repository root with Debian's python3-opencv:
    /usr/bin/python3 images/make_derived.py
"""
import cv2
import numpy as np

# 16-bit gray: the camera photo scaled to the full 16-bit range (x257 maps
# 255 to 65535), cropped to 256x256 to keep the repository small.
camera = cv2.imread("images/camera.png", cv2.IMREAD_UNCHANGED)
camera16 = camera[128:384, 128:384].astype(np.uint16) * 257
cv2.imwrite("images/camera-16bit.png", camera16)

# BGRA: the cat photo with a radial alpha falling from opaque at the centre
# to transparent at the corners, so a filtered alpha differs visibly from a
# kept one.
chelsea = cv2.imread("images/chelsea.png", cv2.IMREAD_UNCHANGED)
h, w = chelsea.shape[:2]
y, x = np.mgrid[0:h, 0:w]
r = np.hypot((x - w / 2) / (w / 2), (y - h / 2) / (h / 2)) / np.sqrt(2)
alpha = np.clip(255 * (1.2 - 1.2 * r), 0, 255).astype(np.uint8)
cv2.imwrite("images/chelsea-alpha.png", np.dstack([chelsea, alpha]))

# Small crops for the golden suite (images/golden/MANIFEST): odd, non-square
# sizes (97x61) so tails and borders matter, and small files so dozens of
# goldens stay light. One per depth and channel layout.
def crop(image):
    return image[100:161, 170:267]

cv2.imwrite("images/chelsea-crop.png", crop(chelsea))
cv2.imwrite("images/chelsea-alpha-crop.png", crop(np.dstack([chelsea, alpha])))
cv2.imwrite("images/camera-crop.png", crop(camera))
cv2.imwrite("images/camera16-crop.png", crop(camera).astype(np.uint16) * 257)
# Float input in [0, 1], as PFM (the float format every build can read).
cv2.imwrite("images/camera-crop-f32.pfm", crop(camera).astype(np.float32) / 255.0)
