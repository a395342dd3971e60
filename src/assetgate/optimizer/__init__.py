"""Interface A, the optimizer: query parameters -> spec -> plan -> pipeline for images, and the
CSS/JS floor for stylesheets and scripts (docs/optimizer.md).
"""
