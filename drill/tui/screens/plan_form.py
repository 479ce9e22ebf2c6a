"""The interview plan form (home `P`): the interview date, the role (decks/roles.toml) and the
daily budget in minutes, as `drill plan --date --role --minutes` takes them. The rule for what
a plan may hold is drill.plan.profile's (validate_profile); the form records through the app's
services (Services.set_plan), so every change is a new row and none is lost. A refusal is one
line under the fields, never a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static

from drill import guarded_db
from drill.errors import DrillError
from drill.tui.plain import shown
from drill.tui.typeahead import TypesAhead

if TYPE_CHECKING:
    from datetime import date

    from drill.decks.roles import RoleTable
    from drill.plan.today import PlanRow
    from drill.tui.host import DrillHost


class PlanFormScreen(TypesAhead, ModalScreen[bool]):
    """Dismisses with True once a plan was recorded, False when cancelled."""

    DEFAULT_CSS = """
    PlanFormScreen { align: center middle; }
    #plan-form { width: 76; max-width: 100%; height: auto; padding: 0 1;
                 border: round $primary; background: $surface; }
    #plan-form Label { width: 9; padding-top: 1; }
    #plan-form Input, #plan-form Select { width: 1fr; }
    #plan-form Horizontal { height: auto; }
    #plan-error { color: $error; height: auto; }
    #plan-help { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        # not a priority binding: enter on the role list chooses a role; in a field it saves
        Binding("enter", "save", "Save"),
    ]

    def __init__(self, plan: PlanRow | None = None) -> None:
        super().__init__()
        self.plan = plan  # the plan in force: the fields start from it
        self.roles: RoleTable | None = None
        self.roles_error: str | None = None
        try:
            from drill.decks.roles import load_roles

            self.roles = load_roles()
        except DrillError as error:
            self.roles_error = str(error)

    @property
    def drill_app(self) -> DrillHost:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        from drill.plan.profile import DEFAULT_MINUTES

        plan = self.plan
        roles = self.roles.roles.values() if self.roles is not None else []
        options = [(shown(f"{role.name} · {role.title}"), role.name) for role in roles]
        names = [name for _, name in options]
        chosen = plan.role if plan is not None and plan.role in names else None
        with Vertical(id="plan-form"):
            yield Static("Interview plan: the date, the role, minutes a day", id="plan-heading")
            with Horizontal():
                yield Label("date")
                day = plan.interview_day.isoformat() if plan is not None else ""
                yield Input(day, placeholder="YYYY-MM-DD", id="plan-date")
            with Horizontal():
                yield Label("role")
                yield Select(
                    options,
                    prompt="choose a role",
                    allow_blank=not names,  # a role is always chosen when there are any
                    value=chosen if chosen is not None else (names[0] if names else Select.BLANK),
                    id="plan-role",
                )
            with Horizontal():
                yield Label("minutes")
                minutes = plan.minutes_per_day if plan is not None else DEFAULT_MINUTES
                yield Input(str(minutes), placeholder=str(DEFAULT_MINUTES), id="plan-minutes")
            error = Static(shown(self.roles_error or ""), id="plan-error")
            error.display = self.roles_error is not None
            yield error
            yield Static(
                "enter: save · tab: next field · ↓ on the role: choose · esc: cancel\n"
                "A change re-plans from today; earlier plans stay in the history.",
                id="plan-help",
            )

    def on_mount(self) -> None:
        self.query_one("#plan-date", Input).focus()
        self.ready_for_keys()  # what was typed while the form opened goes to the date

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def show_error(self, text: str) -> None:
        line = self.query_one("#plan-error", Static)
        line.update(shown(text.splitlines()[0] if text else ""))
        line.display = bool(text)

    def action_save(self) -> None:
        try:
            day, role, minutes = self._entered()
        except DrillError as error:
            self.show_error(str(error))
            return
        services = self.drill_app.services
        if services is None:
            self.show_error("Still loading the decks and the database; try again in a moment.")
            return
        done = guarded_db.write(lambda: services.set_plan(day, role, minutes))
        if done.value is None:
            self.show_error(str(done.notice))
            return
        self.notify(f"Plan saved: interview on {day.isoformat()} · {role} · {minutes} min/day")
        self.dismiss(True)

    def _entered(self) -> tuple[date, str, int]:
        """The fields as a plan, checked by the one rule (drill.plan.profile); DrillError (one
        line) for anything it refuses."""
        from drill.plan.profile import parse_day, today_of, validate_profile

        if self.roles is None:
            raise DrillError(self.roles_error or "the role table could not be read")
        day = parse_day(self.query_one("#plan-date", Input).value.strip())
        role = self.query_one("#plan-role", Select).value
        if not isinstance(role, str):
            raise DrillError("choose a role")
        text = self.query_one("#plan-minutes", Input).value.strip()
        try:
            minutes = int(text)
        except ValueError:
            raise DrillError(f"minutes per day {ascii(text)[:40]} is not a whole number") from None
        today = today_of(self.drill_app.options.now(), self.drill_app.startup.settings)
        validate_profile(day, role, minutes, today, self.roles)
        return day, role, minutes
