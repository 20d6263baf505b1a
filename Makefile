# `make install` and `make uninstall` (PREFIX=/usr/local by default): see scripts/install.
PREFIX ?= /usr/local

.PHONY: install uninstall
install:
	scripts/install --prefix "$(PREFIX)"

uninstall:
	scripts/install --uninstall --prefix "$(PREFIX)"
