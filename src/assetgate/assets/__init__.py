"""CSS and JavaScript: minify, safe-mode tidy, gzip, cache — shared by the optimizer and packages."""
