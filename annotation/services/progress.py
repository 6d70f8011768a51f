"""How far a unit of work is: the one Progress type of every kind (outline article, plot labels, choice, pair)."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Progress:
    """`done` of `total` things labelled (`noun` names a thing); `parts` splits what is left (outline: passages and
    transitions), `size` is how many things the unit shows (an article's passages, removed ones included);
    `wanting` says what an incomplete unit lacks where counting things does not (marking it done quotes it)."""

    total: int
    done: int
    noun: str
    size: int = 0
    parts: dict = field(default_factory=dict)
    wanting: str = ""

    @property
    def left(self) -> int:
        return self.total - self.done

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.done >= self.total

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0

    def as_json(self) -> dict:
        """What the pages are told after each change (their progress comes from this answer)."""
        return {
            "total": self.total, "done": self.done, "left": self.left, "complete": self.complete,
            "percent": self.percent, **{f"{name}_left": left for name, left in self.parts.items()},
        }
