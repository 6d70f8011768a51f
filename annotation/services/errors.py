"""The domain errors of annotation's services: each names the field to fix, in words any caller understands.

Pages and the API turn `field` into a JSON field, commands into a flag.
"""


class ServiceError(ValueError):
    """Something a caller asked for that cannot be done; `field` names what to fix and `message` says why."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


class ChangeInvalid(ServiceError):
    """A change a page sent that cannot be stored."""


class AssignmentError(ServiceError):
    """Assignment that cannot be done as asked; `field` names the option at fault (the command shows it as a flag)."""

    def as_flag(self) -> str:
        return f"--{self.field.replace('_', '-')}: {self.message}" if self.field else self.message
