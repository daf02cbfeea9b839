"""The part of the ``unittest`` test process's script (:mod:`.harness`) that tells the
program's code and objects from everything else, and searches what the tests are about
to compare or call for them; spliced into ``_tester`` where its names are used by the
audit hook.

* ``known`` / ``known_modules``: *identity snapshots* taken before the program runs:
  every module's namespace and every class reachable from one (bases, metaclasses,
  nested classes), each with a copy of its namespace; ``reach_state`` and ``packages``
  hold the functions of the modules the test code imports and of every module of their
  packages. What the tests compare or call is judged against them.
* ``trusted(code)``: code of the harness, of the test module (and code generated while
  it loads), code that library classes held before the program ran, and code of the
  interpreter's library directories (``sys.path`` past the work dir): a file name
  the hook lets nobody forge (see :mod:`.harness`); the rest is the program's.
* ``blamed(frame)``: whether a frame (or ``gc``, ``ctypes``) request may reach the
  program: it asks itself, or a library function that is not a known ``consumer``
  asks while the program's code is further up the stack (up to a library module being
  imported).
* ``forged_type(klass, memo)``: ``"Class.__eq__"`` when a comparison, truth, hashing or
  attribute method of ``klass`` differs from the snapshot (any such method of a class
  made since, but the tests' own), or for ``unittest.mock.ANY``.
* ``forged_operand(values)``: the first such type among ``values`` and what they hold
  (a mock the tests made excepted), searched breadth first (up to 100,000 objects) into
  dicts, lists, tuples, sets, deques (and their subclasses), mapping proxies, numpy
  object arrays, pandas objects and any object's instance state.
* ``replaced(owner, name, function)``: what the program replaced, or made, that the
  test code is about to call as ``owner.name``; ``forged_callable(f)``: whether calling
  ``f`` runs the program's code.
* ``test_mocks``: the mocks the tests made (none of the program's code on the stack, or
  a child of one of theirs), which may stand in for library functions (``mock.patch``).

It runs inside the audit hook, where nothing is audited, so it reads the program's
objects only through C-level accessors (type slots, getset and member descriptors,
``dict.keys``, ``list.__iter__``, ``ndarray.tolist``...) and never calls a method the
program could have written or patched.
"""

from __future__ import annotations

_PROVENANCE = r"""
    # -- which code is the solution's ----------------------------------------------------

    trusted_dirs = []
    for entry in sys.path[1:]:
        if entry and os.path.isdir(entry):
            for path in {entry, os.path.realpath(entry)}:
                trusted_dirs.append(path.rstrip("/") + "/")
    trusted_dirs = tuple(trusted_dirs)
    own = {}

    def adopt(code):
        if id(code) not in own:
            own[id(code)] = code
            for const in code.co_consts:
                if isinstance(const, CodeType):
                    adopt(const)

    frame = getframe(0)
    while frame is not None:
        adopt(frame.f_code)
        frame = frame.f_back
    adopt(test_code)
    del frame
    protected_files = {"main.py", "test_solution.py", "harness.json", sys.argv[0],
                       os.path.abspath("test_solution.py")}
    # Library functions that hand their caller a frame: the caller is the one to judge.
    leaky = {("inspect.py", n) for n in ("currentframe", "stack", "trace",
                                          "getouterframes", "getinnerframes")}
    leaky |= {("traceback.py", n) for n in ("walk_stack", "walk_tb", "extended_frame_gen",
                                             "_walk_tb_with_full_positions")}
    leaky_files = {"bdb.py", "pdb.py", "trace.py", "profile.py", "cProfile.py"}
    # Library functions that read the frames they take and hand none on: only these may
    # take frames while the program is further up the stack. Any other library function
    # may pass what it gets to its caller (functools.singledispatch(inspect.stack)).
    consumers = {
        ("logging/__init__.py", "Logger.findCaller"), ("typing.py", "_caller"),
        ("traceback.py", "print_stack"), ("traceback.py", "format_stack"),
        ("traceback.py", "extract_stack"),
        ("traceback.py", "StackSummary._extract_from_extended_frame_gen"),
        ("collections/__init__.py", "namedtuple"), ("enum.py", "EnumType._create_"),
        ("pandas/util/_exceptions.py", "find_stack_level"),
        ("pandas/core/common.py", "is_setitem_syntax_in_caller_frame"),
        ("pandas/core/common.py", "is_local_in_caller_frame"),
        ("pandas/core/computation/scope.py", "Scope.__init__"),
        ("pandas/core/computation/scope.py", "Scope._update"),
        ("matplotlib/_api/__init__.py", "warn_external"),
        ("matplotlib/cbook.py", "_get_running_interactive_framework"),
        ("matplotlib/axes/_base.py", "_process_plot_var_args.__call__"),
        ("numpy/lib/_index_tricks_impl.py", "AxisConcatenator.__getitem__"),
        ("numpy/matrixlib/defmatrix.py", "bmat"),
    }
    consumer_names = {qualname for _, qualname in consumers}

    def trusted(code):
        if own.get(id(code)) is code:
            return True
        name = code.co_filename
        return type(name) is str and (starts(name, "<frozen ") or starts(name, trusted_dirs))

    def is_leaky(code):
        name = code.co_filename
        if type(name) is not str or not trusted(code):
            return False
        if code.co_name == "<lambda>" and name.endswith("/logging/__init__.py"):
            return True
        if "/ctypes/" in name or name.rsplit("/", 1)[-1] in leaky_files:
            return True  # wrappers and debuggers that hand on what they get: judge the caller
        return (name.rsplit("/", 1)[-1], code.co_name) in leaky

    def consumer(code):
        qualname, name = code.co_qualname, code.co_filename
        if type(qualname) is not str or qualname not in consumer_names:
            return False
        return any(qualname == known_name and name.endswith("/" + suffix)
                   for suffix, known_name in consumers)

    def program_on_stack(frame):
        # Up to the body of a library module being imported (which runs its own code,
        # whoever imports it).
        while frame is not None:
            code = frame.f_code
            if not trusted(code):
                return True
            if code.co_name == "<module>" and own.get(id(code)) is not code:
                return False
            frame = frame.f_back
        return False

    def asker(frame):
        # The library function that asked on the program's behalf, for the reason.
        while frame is not None and is_leaky(frame.f_code):
            frame = frame.f_back
        if frame is None or not trusted(frame.f_code):
            return ""
        return " through " + str(frame.f_code.co_qualname)

    def blamed(frame):
        # Could what is asked for reach the program? The first frame past the helpers
        # that return frames asks: the program's, or a library function that may hand
        # it on to its caller, unless it is a consumer (then only if the program's code
        # is further up the stack).
        while frame is not None and is_leaky(frame.f_code):
            frame = frame.f_back
        if frame is None:
            return False
        if not trusted(frame.f_code):
            return True
        if consumer(frame.f_code) and genuine(frame):
            return False
        return program_on_stack(frame.f_back)

    def genuine(frame):
        # Library code running in its own module's namespace, one that existed before
        # the program ran, with the real builtins: not its code object run by the
        # program with globals of its own (types.FunctionType(code, globals)).
        namespace = frame.f_globals
        return namespaces.get(id(namespace)) is namespace and frame.f_builtins is builtins_dict

    # -- the operands of an assertion or a comparison, and callees ---------------------
    # Everything here runs inside the audit hook, so it reads the program's objects only
    # through C-level accessors: nothing the program wrote may run here.

    dunders = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__",
               "__len__", "__contains__", "__iter__", "__next__", "__hash__", "__sub__",
               "__rsub__", "__abs__", "__round__", "__float__", "__int__", "__index__",
               "__getattribute__", "__getattr__", "__instancecheck__", "__subclasscheck__")
    builtin_kinds = {id(kind) for kind in (
        types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodDescriptorType,
        types.MethodWrapperType, types.ClassMethodDescriptorType, types.GetSetDescriptorType,
        types.MemberDescriptorType, type(None))}
    GetSet, Member = types.GetSetDescriptorType, types.MemberDescriptorType
    CMethod, CSlot = types.MethodDescriptorType, types.WrapperDescriptorType
    MethodType, partial = types.MethodType, functools.partial
    # C-level readers, immune to a metaclass's __getattribute__.
    type_mro = vars(type)["__mro__"].__get__
    type_dict = vars(type)["__dict__"].__get__
    type_name = vars(type)["__name__"].__get__
    function_code = vars(FunctionType)["__code__"].__get__
    method_function = vars(MethodType)["__func__"].__get__
    partial_function = vars(functools.partial)["func"].__get__
    static_func = vars(staticmethod)["__func__"].__get__
    class_func = vars(classmethod)["__func__"].__get__
    dict_keys, dict_values = vars(dict)["keys"], vars(dict)["values"]
    import collections
    iterators = {id(kind): vars(kind)["__iter__"]
                 for kind in (list, tuple, set, frozenset, collections.deque)}
    proxy_values = vars(types.MappingProxyType)["values"]
    plain = {id(kind) for kind in (int, float, complex, str, bytes, bool, type(None))}
    # The assertions whose verdict an operand's own methods could decide.
    comparisons = {name for name in dir(TestCase) if name.startswith(("assert", "fail"))
                   and not name.startswith(("assertRaises", "assertWarns", "assertLogs",
                                            "assertNoLogs", "assertIsInstance",
                                            "assertNotIsInstance", "assertIsNone",
                                            "assertIsNotNone", "assertIs", "fail"))
                   or name in ("failUnlessEqual", "failIfEqual", "failUnlessAlmostEqual",
                               "failIfAlmostEqual", "failUnless", "failIf")}
    ANY = "unittest.mock.ANY"

    # -- what existed before the program ran --------------------------------------------
    # Identity snapshots, taken here, before the program runs: every module and every
    # class reachable from one (through its namespace, bases, metaclass and nested
    # classes), each with a copy of its namespace. What the tests compare or call is
    # judged against them, never by a file name or where code came from.
    MISSING = object()
    known_modules = {}  # id(module) -> (module, its namespace then)
    known = {}  # id(class) -> (class, its namespace then)
    todo = []
    for module in list(sys.modules.values()):
        if isinstance(module, ModuleType) and id(module) not in known_modules:
            members = dict(vars(module))
            known_modules[id(module)] = (module, members)
            todo.extend(value if isinstance(value, type) else type(value)
                        for value in members.values())
    while todo:
        klass = todo.pop()
        if id(klass) in known:
            continue
        members = dict(vars(klass))
        known[id(klass)] = (klass, members)
        todo.extend(type_mro(klass))
        todo.append(type(klass))
        for value in members.values():
            if isinstance(value, type):
                todo.append(value)
            elif type(value) is FunctionType and value.__code__.co_filename[:1] == "<":
                adopt(value.__code__)  # made by a library before the program ran
    del todo
    namespaces = {id(vars(module)): vars(module) for module, _ in known_modules.values()}
    builtins_dict = vars(builtins)
    # The modules the test code imports: what it may call by a bare name it imported
    # (checked with the machinery, see tampered()).
    reach_state = []
    for name in reach_names:
        module = sys.modules.get(name)
        if isinstance(module, ModuleType):
            reach_state.append((name, vars(module), {key: value for key, value
                                                     in vars(module).items()
                                                     if callable(value)}))
    # And the internals of their packages (np.allclose calls numpy's isclose): checked
    # after each assertion's check, and before a call of the test code whose callee
    # comes from the package (a patch that undoes itself when called is seen first).
    packages = {}  # top-level package -> [(name, namespace, callables then)]
    package_of = {}  # id(module) -> its top-level package
    tops = {name.partition(".")[0] for name, _, _ in reach_state} - {"builtins", "sys"}
    for name, module in list(sys.modules.items()):
        top = name.partition(".")[0]
        if top in tops and isinstance(module, ModuleType) and name not in reach_names:
            packages.setdefault(top, []).append(
                (name, vars(module), {key: value for key, value in vars(module).items()
                                      if callable(value)}))
            package_of[id(module)] = top
    for name in reach_names:
        if name in sys.modules:
            package_of[id(sys.modules[name])] = name.partition(".")[0]
    function_module = vars(FunctionType)["__module__"].__get__
    builtin_module = vars(types.BuiltinFunctionType)["__module__"].__get__

    def package_tampered(top):
        for name, now, before in packages.get(top, ()):
            for key, value in before.items():
                current = now.get(key, now)
                if current is not value and not accepted(current):
                    return name + "." + key + " was replaced or removed"
        return None

    def callee_package(owner, function):
        # The package whose internals a call of the test code may run.
        top = package_of.get(id(owner)) if owner is not None else None
        if top is None:
            kind = type(function)
            module = (function_module(function) if kind is FunctionType else
                      builtin_module(function) if kind is types.BuiltinFunctionType else None)
            if type(module) is str:
                top = module.partition(".")[0]
        return top if top in packages else None

    # Mocks: the tests' own (made with none of the program's code on the stack, or
    # children of such a mock) may stand in for a library function (mock.patch) and be
    # compared; any other is the program's.
    test_mocks = {}
    mock_module = sys.modules.get("unittest.mock")
    mock_new_code = None
    if mock_module is not None:
        mock_base = vars(mock_module)["NonCallableMock"]
        mock_new_original = static_func(vars(mock_base)["__new__"])

        def mock_new(cls, /, *args, _audit=audit, **kwargs):
            instance = mock_new_original(cls, *args, **kwargs)
            _audit("conductor_gym.mock", instance, kwargs.get("_new_parent"),
                   kwargs.get("parent"))
            return instance

        mock_base.__new__ = staticmethod(mock_new)
        mock_new_code = mock_new.__code__
        magic_proxy, mock_default = vars(mock_module)["MagicProxy"], vars(mock_module)["DEFAULT"]
        # the comparisons a MagicMock gets by default (identity)
        mock_effects = {id(function(None).__code__): function(None).__code__ for function
                        in vars(mock_module)["_side_effect_methods"].values()}
        instance_dict = next(vars(base)["__dict__"] for base in type_mro(mock_base)
                             if "__dict__" in vars(base)).__get__

    def forged_mock(value):
        # A mock of the tests' compares by identity unless its comparison methods were
        # set (m.__eq__ = f) or configured (m.__eq__.return_value = True), by anyone.
        klass = type(value)
        members = type_dict(klass)
        for name in dunders:
            attr = members.get(name)
            if attr is not None and type(attr) is not magic_proxy:
                return type_name(klass) + "." + name
        found = forged_type(type_mro(klass)[1], {}) if len(type_mro(klass)) > 1 else None
        if found is not None:
            return found
        children = instance_dict(value).get("_mock_children")
        for name in dunders if type(children) is dict else ():
            child = children.get(name)
            if child is None:
                continue
            state = instance_dict(child) if test_mock(child) or any(
                base is mock_base for base in type_mro(type(child))) else None
            if type(state) is not dict:
                return type_name(klass) + "." + name
            effect = state.get("_mock_side_effect")
            if state.get("_mock_return_value", mock_default) is not mock_default or not (
                    effect is None or (type(effect) is FunctionType and mock_effects.get(
                        id(function_code(effect))) is function_code(effect))):
                return type_name(klass) + "." + name
        return None

    def test_mock(value):
        return test_mocks.get(id(value), MISSING) is value

    def register_mock(args, frame):
        instance, *parents = args if len(args) == 3 else (None, None, None)
        if frame is None or frame.f_code is not mock_new_code:
            return "the program forged a harness event"
        if any(parent is not None and not test_mock(parent) for parent in parents):
            return None  # a child of the program's mock is the program's
        if any(parent is not None for parent in parents) or not program_on_stack(frame):
            test_mocks[id(instance)] = instance
        return None

    function_dict = vars(FunctionType)["__dict__"].__get__
    function_globals = vars(FunctionType)["__globals__"].__get__
    tests_namespace = [None]  # the test module's, once it is loaded

    def accepted(value):
        # A stand-in the tests may have put in place of a library function: their mock,
        # their own function, or mock's autospec function around a mock of theirs.
        if test_mock(value):
            return True
        if type(value) is FunctionType:
            return own_function(value) or test_mock(function_dict(value).get("mock"))
        return False

    def own_function(function):
        # The tests' or the harness's function, in their own namespace.
        code, namespace = function_code(function), function_globals(function)
        return own.get(id(code)) is code and (namespaces.get(id(namespace)) is namespace
                                              or namespace is tests_namespace[0])

    def replaced(owner, name, function):
        # What the program replaced that the test code is about to call as
        # owner.name (a library module's function, a library class's method), or None.
        if type(name) is not str:
            return None
        entry = known_modules.get(id(owner))
        if entry is not None and entry[0] is owner:
            before = entry[1].get(name, MISSING)
            if before is not MISSING and function is not before and not accepted(function):
                return str(entry[1].get("__name__")) + "." + name
            return None
        if owner is solution or test_mock(owner) or test_instance(owner):
            return None
        if any(base is ModuleType for base in type_mro(type(owner))):
            # a module that did not exist before the program ran: the tests' names
            # taken from the program's globals may be a module it made
            if type(function) is FunctionType and trusted(function_code(function)):
                return None
            return None if accepted(function) else "a module it made: " + name
        is_class = any(base is type for base in type_mro(type(owner)))
        mro = type_mro(owner if is_class else type(owner))
        if any(base is mock_base for base in mro) if mock_module is not None else False:
            return "a mock it made: " + name
        for base in mro:
            members = type_dict(base)
            if name in members:
                entry = known.get(id(base))
                if entry is not None and entry[0] is base:
                    now = members[name]
                    if now is not entry[1].get(name, MISSING) and not accepted(now):
                        return type_name(base) + "." + name
                elif not any(base is klass for klass in test_state):
                    return "its own class's " + type_name(base) + "." + name
                return None
        return None

    def program_member(klass, names):
        # "Class.name" for the first of names that klass (or a base) takes from the
        # program's code, else None.
        for base in type_mro(klass):
            members = type_dict(base)
            for name in names:
                attr = members.get(name)
                if type(attr) is staticmethod:
                    attr = static_func(attr)
                elif type(attr) is classmethod:
                    attr = class_func(attr)
                if id(type(attr)) in builtin_kinds:
                    continue
                code = function_code(attr) if type(attr) is FunctionType else None
                if code is None:
                    call = type_dict(type(attr)).get("__call__")
                    code = function_code(call) if type(call) is FunctionType else None
                if code is not None and not trusted(code):
                    return type_name(base) + "." + name
        return None

    def forged_type(klass, memo):
        # "Class.__eq__" when a comparison, truth, hashing or attribute method of klass
        # is not what it was before the program ran: one a class that existed then has
        # had replaced, or any one of a class made since (whatever its code: borrowed
        # from a library, a builtin, generated by dataclasses), but for the tests' own.
        # Only C-level reads: the program's classes may have metaclasses whose methods
        # would otherwise run here, inside the hook, unaudited.
        seen = memo.get(id(klass))
        if seen is not None and seen[0] is klass:
            return seen[1]
        found = None
        for base in type_mro(klass):
            members = type_dict(base)
            if (type_name(base) == "_ANY" and type(members.get("__module__")) is str
                    and members.get("__module__") == "unittest.mock"):
                found = ANY
                break
            entry = known.get(id(base))
            for name in dunders:
                attr = members.get(name, MISSING)
                if entry is not None and entry[0] is base:
                    if attr is entry[1].get(name, MISSING):
                        continue
                elif attr is MISSING or attr is None:
                    continue
                if type(attr) is FunctionType and own_function(attr):
                    continue  # the tests' or the harness's own
                found = type_name(base) + "." + name
                break
            if found is not None:
                break
        memo[id(klass)] = (klass, found)
        return found

    def descriptor(mro, name, kind):
        for base in mro:
            attr = type_dict(base).get(name)
            if attr is not None:
                return attr if type(attr) is kind else None
        return None

    def contents(value, klass, room):
        # What a value of a library type holds that a comparison may reach, read in C:
        # plain containers (and their subclasses), numpy object arrays, pandas objects.
        mro = type_mro(klass)
        for base in mro:
            if base is dict:
                return [*dict_keys(value), *dict_values(value)]
            iterate = iterators.get(id(base))
            if iterate is not None:
                return iterate(value)
        for base in mro:
            members = type_dict(base)
            if type_name(base) == "ndarray" and type(members.get("dtype")) is GetSet:
                kind = members["dtype"].__get__(value)
                hasobject = descriptor(type_mro(type(kind)), "hasobject", GetSet)
                ravel, getitem = members.get("ravel"), members.get("__getitem__")
                tolist = members.get("tolist")
                if hasobject is None or not hasobject.__get__(kind):
                    return ()
                if not (type(ravel) is type(tolist) is CMethod and type(getitem) is CSlot):
                    return ()
                return tolist(getitem(ravel(value), slice(0, room)))
        if klass is types.MappingProxyType:
            return proxy_values(value)
        # Any other object: what its instance state holds (a library object's __eq__
        # may compare its attributes), and for pandas its C-level slots too.
        found = []
        state = descriptor(mro, "__dict__", GetSet)
        if state is not None:
            try:
                held = state.__get__(value)
            except Exception:
                held = None
            if type(held) is dict:
                found.extend(dict_values(held))
        modules = [type_dict(base).get("__module__") for base in mro]
        if not any(type(module) is str and starts(module, "pandas.") for module in modules):
            for base in mro:
                for attr in type_dict(base).values():
                    if type(attr) is Member:
                        try:
                            found.append(attr.__get__(value))
                        except Exception:
                            continue
            return found
        for base in mro:
            module = type_dict(base).get("__module__")
            for key, attr in type_dict(base).items():
                if type(attr) is Member or (
                        type(attr) is GetSet and type(module) is str
                        and starts(module, "pandas._libs") and key in pandas_slots):
                    try:
                        found.append(attr.__get__(value))
                    except Exception:
                        continue
        return found

    pandas_slots = {"values", "blocks", "axes", "_ndarray", "_dtype", "_data"}

    def forged_operand(values):
        # The first program-made type among values and what they hold, searched breadth
        # first up to a budget of objects.
        todo, seen, budget, at, memo = list(values), set(), 100000, 0, {}
        while at < len(todo) and at < budget:
            value = todo[at]
            at += 1
            klass = type(value)
            if id(klass) in plain or id(value) in seen:
                continue
            seen.add(id(value))
            found = forged_mock(value) if test_mock(value) else forged_type(klass, memo)
            if found is not None:
                return found
            if len(todo) < budget:
                todo.extend(contents(value, klass, budget - len(todo)))
        return None

    def forged_callable(function):
        # Whether calling function runs the program's code: a function, a method, a
        # partial, a class (its constructor) or an object (its __call__).
        for _ in range(16):
            klass = type(function)
            if klass is FunctionType:
                return not trusted(function_code(function))
            if klass is MethodType:
                function = method_function(function)
            elif klass is partial:
                function = partial_function(function)
            else:
                break
        klass = type(function)
        if any(base is type for base in type_mro(klass)):
            if program_member(function, ("__new__", "__init__")) is not None:
                return True
        return program_member(klass, ("__call__",)) is not None

    def test_instance(owner):
        klass = type(owner)
        return any(klass is known for known in test_state)

"""
