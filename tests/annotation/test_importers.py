"""THE importer registry (assessments.importers.registry): every kind of data import registered once, with a command
that exists; the console's data imports, its upload form and the commands read it."""

from django.core.management import get_commands, load_command_class

from annotation import importers
from annotation.api.serializers import TopicUploadSerializer
from annotation.models import DataImport


def test_every_kind_of_data_import_has_one_registration():
    assert sorted(importers.REGISTRY) == sorted(DataImport.Kind.values)


def test_every_registration_names_a_command_there_is():
    commands = get_commands()
    assert {kind: i.command for kind, i in importers.REGISTRY.items() if i.command not in commands} == {}


def test_each_option_of_an_importer_has_its_own_name():
    assert {kind: [o.name for o in i.options] for kind, i in importers.REGISTRY.items()
            if len({o.name for o in i.options}) != len(i.options)} == {}


def test_each_command_takes_its_importers_options_as_flags():
    """A registered option is its command's flag, with the registration's help and default."""
    differing = {}
    for kind, importer in importers.REGISTRY.items():
        command = load_command_class(get_commands()[importer.command], importer.command)
        flags = {flag: action for action in command.create_parser("manage.py", importer.command)._actions
                 for flag in action.option_strings}
        for option in importer.options:
            action = flags.get(option.flag)
            if action is None or (action.help, action.default) != (option.help, option.default or
                                                                   (False if option.type is bool else None)):
                differing[kind, option.flag] = action and (action.help, action.default)
    assert differing == {}


def test_the_apis_topic_upload_takes_the_topics_importers_options():
    fields = TopicUploadSerializer().fields
    assert {name: (f.help_text, f.default) for name, f in fields.items() if name != "file"} == {
        o.name: (o.help, o.default or False) for o in importers.get("topics").options}
    assert list(fields["format"].choices) == list(importers.get("topics").options[0].choices)
