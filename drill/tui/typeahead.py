"""Keys typed in a burst reach the field they were typed for.

A terminal delivers a fast burst (typing, a paste) all at once. Textual routes each key to the
widget focused when the app reads it, and a key's action runs later: so the keys after `B`
went to the home screen (which the browser was about to replace) and the keys after a `tab`
to the field before it. DrillApp (drill/tui/app.py) hands keys over one at a time, each once
the one before has been handled, and holds them while a screen that takes typing is still
opening: such a screen mixes in `TypesAhead` and calls `ready_for_keys()` after focusing its
field.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class HoldsKeys(Protocol):
    """An app that holds typed keys until the screen is ready for them (DrillApp)."""

    async def release_keys(self) -> None:
        """Hand the held keys over, in order, now that the screen may be ready."""


class TypesAhead:
    """Mixin for a Screen whose first field takes the keys typed while it opens."""

    keys_ready = False  # read by DrillApp: False holds keys and pastes for this screen

    def ready_for_keys(self) -> None:
        """Call after focusing the field. The focus itself is applied by a callback queued on
        the app; this one is queued after it, so the held keys go to the focused field."""
        app = self.app  # type: ignore[attr-defined]

        async def ready() -> None:
            self.keys_ready = True
            if isinstance(app, HoldsKeys):  # another app hands keys over as they come
                await app.release_keys()

        app.call_later(ready)
