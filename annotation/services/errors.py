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
