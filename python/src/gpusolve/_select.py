"""Format selection: the host-only rule, and the measured selection on the GPU."""
import ctypes

from . import _lib
from ._arrays import as_host_csr
from ._errors import Error, bad, check

lib = _lib.lib


def options_string(opts, what="options"):
    """A backend or preconditioner option string from None, a str or a dict (bytes or None)."""
    if opts is None or opts == "":
        return None
    if isinstance(opts, dict):
        opts = ",".join(f"{k}={v}" for k, v in opts.items())
    if not isinstance(opts, str):
        raise bad(f"{what}: expected a 'key=value,...' string or a dict, not "
                  f"{type(opts).__name__}")
    return opts.encode()


def _features(f):
    return {k: getattr(f, k) for k, _ in _lib.SelectFeatures._fields_}


def _names(rule):
    return [bytes(rule.names[i].value).decode() for i in range(rule.n)]


class Selection:
    """What a selection chose and why.

    format      the chosen format
    candidates  the rule's ranked candidates (rule=True: format is the first)
    row         the rule's table row that fired
    excluded    what the rule's filters removed and why ("" when nothing)
    features    the feature vector the rule read (dict)
    measured    True when formats were timed on the GPU (rule=False)
    times       rule=False: one dict per candidate (name, status, prepare_s, spmv_s, cost_s)
    cache       rule=False: "off", "miss" or "hit" (the selection cache)
    warning     rule=False: non-fatal trouble (an unwritable cache folder), or ""
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        how = "measured" if self.measured else "rule"
        return (f"Selection(format={self.format!r}, {how}, candidates={self.candidates}, "
                f"row={self.row!r})")


def _status_name(st):
    if st == 1:
        return "deferred"
    if st == 2:
        return "skipped"
    return "ok" if st == 0 else _lib.s(lib.gs_status_string(st))


def selection_from_record(rec):
    """A Selection from a gs_selection_t (copied out)."""
    times = []
    for i in range(rec.ntimes):
        t = rec.times[i]
        times.append({"name": bytes(t.name).split(b"\0")[0].decode(),
                      "status": _status_name(t.status), "prepare_s": t.prepare_s,
                      "spmv_s": t.spmv_s, "spmv_t_s": t.spmv_t_s, "cost_s": t.cost_s})
    return Selection(format=bytes(rec.chosen_name).split(b"\0")[0].decode(),
                     candidates=_names(rec.rule), row=_lib.s(rec.rule.row),
                     excluded=bytes(rec.rule.excluded).split(b"\0")[0].decode(),
                     features=_features(rec.features), measured=bool(rec.measured),
                     times=times, cache={0: "off", 1: "miss", 2: "hit"}.get(rec.cache, "?"),
                     warning=bytes(rec.warning).split(b"\0")[0].decode(),
                     staged=bool(rec.staged), seconds=rec.seconds,
                     first_format=bytes(rec.first_name).split(b"\0")[0].decode(),
                     switches=rec.switches)


def select(A, rule=True, *, options=None, transpose=False, expected_products=1000,
           cache=True, context=None):
    """The SpMV format for A.

    rule=True: the rule stage alone, from A's features, on the host (no GPU needed, nothing
    timed): the ranked candidates and the first of them.
    rule=False: the measured selection on the GPU: the candidates prepared and timed, the one
    of least prepare + expected_products * product time chosen (cached on disk per matrix and
    GPU unless cache=False).
    transpose=True keeps only formats with a transpose product (A^T x). options: backend
    options ("max_fill=4" or {"max_fill": 4}), whose fill limits decide the exclusions."""
    o = options_string(options)
    need_t = 1 if transpose else 0
    if rule:  # the rule reads host features: a cupyx matrix is copied to the host for it
        H = as_host_csr(A)
        if o is not None:
            check(lib.gs_spmv_options_check(o), "options")
        f = _lib.SelectFeatures()
        check(lib.gs_select_features(H.ptr, ctypes.byref(f)))
        r = _lib.SelectRule()
        check(lib.gs_select_rule(ctypes.byref(f), o, need_t, ctypes.byref(r)))
        names = _names(r)
        if not names:
            raise bad("select: no format takes this matrix with these options")
        return Selection(format=names[0], candidates=names, row=_lib.s(r.row),
                         excluded=bytes(r.excluded).split(b"\0")[0].decode(),
                         features=_features(f), measured=False, times=[], cache="off",
                         warning="", staged=False, seconds=0.0, first_format=names[0],
                         switches=0)
    if o is not None:
        check(lib.gs_spmv_options_check(o), "options")
    if not expected_products > 0:
        raise bad("select: expected_products must be > 0")
    from ._device import CupyOrder, DeviceMatrix, Product
    from ._spmv import context_for, matrix_input
    H, device = matrix_input(A)  # a cupyx matrix stays on its device
    ctx = context_for(context, device, cupy_inputs=device is not None, matrix=H)
    with CupyOrder(ctx, active=device is not None):
        M = DeviceMatrix(ctx, H)
    so = _lib.SelectOpts()
    lib.gs_select_opts_default(ctypes.byref(so))
    so.expected_products = float(expected_products)
    so.need_transpose = need_t
    so.use_cache = 1 if cache else 0
    S = ctypes.c_void_p()
    check(lib.gs_spmv_create_auto(ctypes.byref(S), ctx.handle, M.handle, o, ctypes.byref(so)))
    prod = Product(M, S)
    rec = lib.gs_spmv_selection(prod.handle)
    if not rec:
        raise Error("select: the auto product carries no selection record", "GS_ERR_INTERNAL",
                    -12)
    return selection_from_record(rec.contents)
