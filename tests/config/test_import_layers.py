"""The apps' layers, read from the source (no import runs): every `import` counts, at module level or inside a
function, since a lazy import that dodges a circle is still a circle.

- retrieval imports neither assessments nor annotation; assessments does not import annotation (reaching a model
  by name, apps.get_model, is not an import);
- annotation.models reaches no annotation.services, directly or through other annotation modules;
- no import circles among the modules of any app (annotation, assessments, retrieval, config): a tasks module
  imports its service, and the service sends the tasks by name (retrieval.services.background.send).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotation", "assessments", "retrieval", "config")


def _modules() -> dict[str, Path]:
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _known(name: str) -> str | None:
    """The project module an imported name lives in (the longest known prefix), or None outside the apps."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> dict[str, int]:
    """{imported project module: line of its first import} for every import statement in `module`'s file."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [_known(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [_known(f"{base}.{alias.name}") or _known(base) for alias in node.names]
        else:
            continue
        for target in targets:
            if target and target != module:
                found.setdefault(target, node.lineno)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def _where(source: str, target: str) -> str:
    return f"{MODULES[source].relative_to(ROOT)}:{GRAPH[source][target]} imports {target}"


def _app(module: str) -> str:
    return module.partition(".")[0]


def _crossing(app: str, forbidden: set[str]) -> list[str]:
    return [_where(source, target) for source, targets in sorted(GRAPH.items()) if _app(source) == app
            for target in sorted(targets) if _app(target) in forbidden]


def _cycles(modules: set[str]) -> list[list[str]]:
    """The import circles among `modules`: each strongly connected group of more than one module (Tarjan)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in GRAPH[module]:
            if target not in modules:
                continue
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return groups


def test_the_graph_sees_function_level_imports():
    """The reader finds the imports it is meant to judge (a guard against a reader that finds nothing)."""
    assert "annotation.models" in GRAPH["annotation.services.status"]
    assert "retrieval.services.jobs" in GRAPH["retrieval.tasks"]
    assert any(GRAPH[module] for module in MODULES if _app(module) == "assessments")


def test_retrieval_imports_neither_assessments_nor_annotation():
    assert _crossing("retrieval", {"assessments", "annotation"}) == []


def test_assessments_does_not_import_annotation():
    assert _crossing("assessments", {"annotation"}) == []


def test_annotation_models_reach_no_services():
    """Models are the bottom of the app: annotation.models, and what it imports inside annotation, import no
    annotation.services (a unit's kind is the model's own rule; services call models, never the reverse)."""
    seen, todo, found = set(), ["annotation.models"], []
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for target in GRAPH[module]:
            if target.startswith("annotation.services"):
                found.append(_where(module, target))
            elif _app(target) == "annotation":
                todo.append(target)
    assert found == []


def _circles(app: str) -> list[list[str]]:
    members = {module for module in MODULES if _app(module) == app}
    return [[_where(source, target) for source in group for target in sorted(GRAPH[source]) if target in group]
            for group in _cycles(members)]


def test_no_import_circles_in_annotation():
    assert _circles("annotation") == []


def test_no_import_circles_in_retrieval():
    """retrieval.tasks imports the jobs service; the service sends the tasks by their names, importing no tasks."""
    assert _circles("retrieval") == []


def test_no_import_circles_in_assessments_or_config():
    assert _circles("assessments") == [] and _circles("config") == []


def test_the_cycle_check_finds_a_circle():
    """The check itself: two modules importing each other are found (a guard against a check that finds nothing)."""
    GRAPH["retrieval.tasks"]["retrieval.services.jobs"]  # the tasks import the service...
    GRAPH["retrieval.services.jobs"]["retrieval.tasks"] = 1  # ...and, made up here, the service the tasks
    try:
        assert _cycles({"retrieval.tasks", "retrieval.services.jobs"}) == [["retrieval.services.jobs",
                                                                            "retrieval.tasks"]]
    finally:
        del GRAPH["retrieval.services.jobs"]["retrieval.tasks"]
