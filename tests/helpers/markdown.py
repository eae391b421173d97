"""Document text that must render as itself (links, maths, autolinks, icons, arrows)."""

from __future__ import annotations

QUOTED = (  # what documents hold and the answer quotes; each must render as the text it is
    r"See the \[setup guide\](http://intranet.example/setup) first.",
    r"Escaped maths \$x^2\$ and \(y\) stay text.",
    "Bare https://evil.example/p?q=1 and www.evil.example and mail ops@evil.example, <https://x.example>.",
    "Icons :material/warning: :material_check: :streamlit: :smile: :+1: and a time 12:30:45.",
    "Arrows a -> b <- c <-> d -- e >= f <= g ~= h.",
)
