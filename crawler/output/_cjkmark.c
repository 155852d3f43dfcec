/* crawler.output._cjkmark: `marked(text)`, crawler.output.cjk's marking of CJK text in C.
 *
 * The index writer marks every page's text; Python's regular expressions take about 10 ns a
 * character, holding the GIL, only to find that a page has no CJK (0.1 ms a page), and over 1 ms
 * to mark a page of Japanese. This takes a few ns a character without the GIL, and no time at all
 * for text whose characters are all below U+0100 (CPython then keeps it one byte a character).
 *
 * The same rule as crawler.output.cjk's Python: a mark already in the text is dropped; then a MARK
 * goes between two characters when one is CJK and the other is CJK or a letter or digit
 * (str.isalnum). crawler/output/cjk.py checks this against its Python before it trusts it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MARK 0x2063

static inline int
is_cjk(Py_UCS4 c)
{
    return (c >= 0x3005 && c <= 0x3007) || (c >= 0x3040 && c <= 0x30FF)
           || (c >= 0x31F0 && c <= 0x31FF) || (c >= 0x3400 && c <= 0x4DBF)
           || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF)
           || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF66 && c <= 0xFF9F)
           || (c >= 0x20000 && c <= 0x3134F);
}

/* Whether a mark goes between `a` and `b`, the CJK-ness of each given. */
static inline int
marks_between(Py_UCS4 a, int a_cjk, Py_UCS4 b, int b_cjk)
{
    return (a_cjk && (b_cjk || Py_UNICODE_ISALNUM(b))) || (b_cjk && Py_UNICODE_ISALNUM(a));
}

/* What the first pass finds. */
typedef struct {
    Py_ssize_t kept;  /* characters kept: all but marks */
    Py_ssize_t marks; /* marks to write */
    Py_UCS4 widest;   /* the widest character kept */
    int any_cjk, any_mark;
} survey;

/* Both passes, for one width of input: a pass writes when `out` is not NULL. Written once per
 * width so the compiler reads the characters directly, not through a switch per character. */
#define PASS(NAME, TYPE)                                                                         \
    static void NAME(const TYPE *data, Py_ssize_t length, survey *found, int out_kind,          \
                     void *out)                                                                  \
    {                                                                                            \
        Py_UCS4 previous = 0;                                                                    \
        int previous_cjk = 0;                                                                    \
        Py_ssize_t kept = 0, at = 0;                                                             \
        for (Py_ssize_t i = 0; i < length; i++) {                                                \
            Py_UCS4 c = data[i];                                                                 \
            if (c == MARK) {                                                                     \
                found->any_mark = 1;                                                             \
                continue;                                                                        \
            }                                                                                    \
            int cjk = c >= 0x3005 && is_cjk(c);                                                  \
            if (kept > 0 && (cjk || previous_cjk)                                                \
                && marks_between(previous, previous_cjk, c, cjk)) {                              \
                if (out != NULL) {                                                               \
                    PyUnicode_WRITE(out_kind, out, at, MARK);                                    \
                }                                                                                \
                at++;                                                                            \
            }                                                                                    \
            if (out != NULL) {                                                                   \
                PyUnicode_WRITE(out_kind, out, at, c);                                           \
            }                                                                                    \
            at++;                                                                                \
            found->any_cjk |= cjk;                                                               \
            found->widest = c > found->widest ? c : found->widest;                               \
            previous = c;                                                                        \
            previous_cjk = cjk;                                                                  \
            kept++;                                                                              \
        }                                                                                        \
        found->kept = kept;                                                                      \
        found->marks = at - kept;                                                                \
    }

PASS(pass_ucs2, Py_UCS2)
PASS(pass_ucs4, Py_UCS4)

static void
pass(int kind, const void *data, Py_ssize_t length, survey *found, int out_kind, void *out)
{
    if (kind == PyUnicode_2BYTE_KIND) {
        pass_ucs2(data, length, found, out_kind, out);
    }
    else {
        pass_ucs4(data, length, found, out_kind, out);
    }
}

/* The widest character of a two-byte string: a loop the compiler makes vector instructions of,
 * so most pages (no character as wide as a mark or CJK) are let through at a fraction of a pass's
 * cost. */
static Py_UCS2
widest_ucs2(const Py_UCS2 *data, Py_ssize_t length)
{
    Py_UCS2 widest = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        widest = data[i] > widest ? data[i] : widest;
    }
    return widest;
}

static PyObject *
marked(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "marked() takes a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    if (kind == PyUnicode_1BYTE_KIND) {
        return Py_NewRef(text); /* no character of CJK or MARK is below U+0100 */
    }
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (kind == PyUnicode_2BYTE_KIND && widest_ucs2(data, length) < MARK) {
        return Py_NewRef(text); /* MARK is below every CJK character */
    }
    survey found = {0};
    /* The passes read a str we hold a reference to (immutable) and write one nobody else has
     * seen yet: no Python object changes meanwhile, so the event loop's thread need not wait
     * for the index writer's thread here. */
    Py_BEGIN_ALLOW_THREADS
    pass(kind, data, length, &found, 0, NULL);
    Py_END_ALLOW_THREADS
    if (!found.any_cjk && !found.any_mark) {
        return Py_NewRef(text);
    }
    /* As wide as the widest character written: CPython's strings are as narrow as they can be. */
    Py_UCS4 widest = found.marks > 0 && found.widest < MARK ? MARK : found.widest;
    PyObject *result = PyUnicode_New(found.kept + found.marks, widest);
    if (result == NULL) {
        return NULL;
    }
    survey again = {0};
    int out_kind = PyUnicode_KIND(result);
    void *out = PyUnicode_DATA(result);
    Py_BEGIN_ALLOW_THREADS
    pass(kind, data, length, &again, out_kind, out);
    Py_END_ALLOW_THREADS
    return result;
}

static PyMethodDef methods[] = {
    {"marked", marked, METH_O, "marked(text) -> text with CJK marks (crawler.output.cjk)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "crawler.output._cjkmark",
    .m_doc = "crawler.output.cjk's marking of CJK text, in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__cjkmark(void)
{
    return PyModule_Create(&module);
}
