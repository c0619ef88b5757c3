"""Path parameters of the API, in ASCII: ``\\d`` would also match ``１`` and ``٣``.

(ApiErrorMiddleware refuses non-ASCII API paths anyway; these keep the patterns honest.)
"""

# A database id as it is written: ASCII digits, no sign, no leading zero, at most 18
# (inside a signed 64-bit integer), so each object has one path.
ID = r"[1-9][0-9]{0,17}"
