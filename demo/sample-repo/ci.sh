#!/bin/sh
# What CI runs on every pull request: all tests, nothing to install.
set -e
node --test
