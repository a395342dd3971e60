"""The pixel floor: what assetgate decodes and encodes, with what each untrusted decode may cost
checked from the file's header before libvips or Pillow reads its pixels.
"""
