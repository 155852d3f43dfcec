/* The page step's walk over a parsed page, in C: one pass over selectolax's lexbor tree that
 * finds what crawler.page.read needs (links, META tags, title, base, language, section markers)
 * and reads the text a section leaves indexable (`scan`); and the page's links resolved, checked
 * and made unique (`links`). crawler.page.walk has both in Python: they are the reference, and
 * run wherever this module is not built or not trusted (crawler.page.compiled decides).
 *
 * The walk reads lexbor's nodes in place, by the address selectolax gives as `Node.mem_id`. It
 * relies on the layout of a handful of lexbor structs, copied below from lexbor 3.1.0 (the
 * version selectolax 1.0.2 bundles; lexbor is Apache-2.0, as this project is). It calls no
 * lexbor function. crawler.page.compiled checks the layout against what selectolax reports (the
 * handshake functions at the end) and compares it with the Python walk before trusting it.
 *
 * What it reads, in document order (pre-order, from the document node):
 * - elements of script, style, template, iframe, noembed and noframes are skipped with all they
 *   hold: no text, links, META tags or markers come from inside them;
 * - comments whose stripped content starts like a marker are given to the caller's
 *   `marker_word(content)`, which answers None or (action, kind, flags); the open sections
 *   and googleoff counts that follow decide, for every later node, what holds there;
 * - the first `max_anchors` of: <a> and <area> with a non-empty href: (href, rel or None, held), `held` when the start tag
 *   is inside a section that says nofollow; <frame> and <iframe> with a non-empty src the same
 *   way, as (src, None, held) (an iframe's content is still skipped);
 * - <meta> with a name or an http-equiv: (name, content, http-equiv), each str or None;
 * - the first <title>'s text, the first <base> with a non-empty href, <html lang>;
 * - text nodes: skipped when only HTML whitespace, else stripped as str.strip() strips; inside
 *   a noindex section nowhere, inside a nosnippet section in `nosnippet`, else when inside
 *   <body>: in `nosnippet` inside the body's boilerplate (<nav>, <noscript>, an element with
 *   role="navigation": snippets must come from what the page says, not from an "enable
 *   JavaScript" notice or a navigation menu), else in `text`. Fragments are joined with one
 *   space, empty ones included, exactly as selectolax's `text(separator=" ", strip=True,
 *   skip_empty=True)` joins them.
 * - the fragments of `text` inside an h1-h6 heading or a <dt> or <dfn> (a term the page defines)
 *   of the body, also in `headings`: joined the
 *   same way, a heading inside another read with it, a heading without text left out.
 * - whether an element of an unknown tag named `noindex` (Yandex's element form) occurs.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* --- lexbor 3.1.0's layout (source/lexbor/dom/interfaces/{node,element,attr,character_data}.h,
 * core/hash.h, core/str.h) ------------------------------------------------------------------- */

typedef struct {
    unsigned char *data;
    size_t length;
} lxb_str;

typedef struct lxb_node lxb_node;
struct lxb_node {
    void *events; /* lxb_dom_event_target_t */
    uintptr_t local_name;
    uintptr_t prefix;
    uintptr_t ns;
    void *owner_document;
    lxb_node *next;
    lxb_node *prev;
    lxb_node *parent;
    lxb_node *first_child;
    lxb_node *last_child;
    void *user;
    int type; /* lxb_dom_node_type_t */
};

typedef struct lxb_attr lxb_attr;
typedef struct {
    lxb_node node;
    uintptr_t upper_name;
    uintptr_t qualified_name;
    lxb_str *is_value;
    lxb_attr *first_attr;
    lxb_attr *last_attr;
} lxb_element; /* the fields after last_attr are not read */

struct lxb_attr {
    lxb_node node;
    uintptr_t upper_name;
    uintptr_t qualified_name;
    lxb_str *value;
    void *owner;
    lxb_attr *next;
    lxb_attr *prev;
};

typedef struct {
    lxb_node node;
    lxb_str data;
} lxb_character_data;

#define HASH_SHORT_SIZE 16
typedef struct {
    union {
        unsigned char *long_str;
        unsigned char short_str[HASH_SHORT_SIZE + 1];
    } u;
    size_t length;
    void *next;
} lxb_hash_entry; /* first member of lxb_tag_data_t and lxb_dom_attr_data_t */

enum { NODE_ELEMENT = 0x01, NODE_TEXT = 0x03, NODE_COMMENT = 0x08 };

/* Tag ids from lexbor's fixed table (source/lexbor/tag/const.h); a tag it does not know gets a
 * pointer to its lxb_tag_data_t as its id, above this table. */
enum {
    TAG_A = 0x0007,
    TAG_AREA = 0x0013,
    TAG_BASE = 0x0018,
    TAG_BODY = 0x0020,
    TAG_FRAME = 0x0059,
    TAG_DFN = 0x0031,
    TAG_DT = 0x0036,
    TAG_H1 = 0x005c,
    TAG_H2 = 0x005d,
    TAG_H3 = 0x005e,
    TAG_H4 = 0x005f,
    TAG_H5 = 0x0060,
    TAG_H6 = 0x0061,
    TAG_HTML = 0x0066,
    TAG_IFRAME = 0x0068,
    TAG_META = 0x007d,
    TAG_NAV = 0x0087,
    TAG_NOEMBED = 0x008a,
    TAG_NOFRAMES = 0x008b,
    TAG_NOSCRIPT = 0x008c,
    TAG_SCRIPT = 0x00a2,
    TAG_STYLE = 0x00ae,
    TAG_TEMPLATE = 0x00b6,
    TAG_TITLE = 0x00bd,
    TAG_LAST_ENTRY = 0x00c7,
};

/* Attribute ids (source/lexbor/dom/interfaces/attr_const.h). `name` and `role` are not in the
 * table: their ids point to their lxb_dom_attr_data_t. */
enum {
    ATTR_CONTENT = 0x0010,
    ATTR_HREF = 0x001d,
    ATTR_HTTP_EQUIV = 0x0020,
    ATTR_LANG = 0x0023,
    ATTR_REL = 0x0032,
    ATTR_SRC = 0x003d,
    ATTR_LAST_ENTRY = 0x0049,
};

/* The directive flags and marker actions of crawler.page.exclusion. */
enum { NOINDEX = 1, NOFOLLOW = 2, NOSNIPPET = 4 };
enum { ACTION_OPEN = 0, ACTION_CLOSE = 1, ACTION_OFF = 2, ACTION_ON = 3 };

/* --- helpers ---------------------------------------------------------------------------------- */

static const unsigned char *
entry_str(uintptr_t id, size_t *length)
{
    const lxb_hash_entry *entry = (const lxb_hash_entry *) id;
    *length = entry->length;
    return entry->length <= HASH_SHORT_SIZE ? entry->u.short_str : entry->u.long_str;
}

static bool
ascii_ieq(const unsigned char *data, const char *name, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        unsigned char c = data[i];
        if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (unsigned char) name[i]) {
            return false;
        }
    }
    return true;
}

/* Whether `name` (as written, any case) is one of `names`. */
static bool
name_listed(const char *const *names, const unsigned char *name, size_t length)
{
    for (; *names != NULL; names++) {
        if (strlen(*names) == length && ascii_ieq(name, *names, length)) {
            return true;
        }
    }
    return false;
}

/* Whether a tag or attribute id outside lexbor's fixed table names `name` (lower case). */
static bool
dynamic_id_is(uintptr_t id, uintptr_t table_end, const char *name, size_t length)
{
    size_t entry_length;
    const unsigned char *entry;
    if (id < table_end) {
        return false;
    }
    entry = entry_str(id, &entry_length);
    return entry_length == length && ascii_ieq(entry, name, length);
}

/* Whether an element of a tag outside lexbor's table is named `name`, exactly as selectolax's
 * `tag` gives its name: the qualified name, else the local name. */
static bool
unknown_tag_is(const lxb_node *element, const char *name)
{
    uintptr_t qualified = ((const lxb_element *) element)->qualified_name;
    size_t entry_length, length = strlen(name);
    const unsigned char *entry;
    if (qualified == 0) {
        qualified = element->local_name;
    }
    if (qualified < TAG_LAST_ENTRY) {
        return false;
    }
    entry = entry_str(qualified, &entry_length);
    return entry_length == length && memcmp(entry, name, length) == 0;
}

/* The attribute selectolax's `attributes.get(name)` finds: the first whose qualified name (its
 * local name when it has no other) is `name`, ASCII case-insensitively. `xlink:href` is not
 * `href`. `id` is the name's id in lexbor's fixed table, or 0 when it has none there. */
static const lxb_attr *
find_attr(const lxb_node *element, uintptr_t id, const char *name)
{
    const lxb_attr *attr = ((const lxb_element *) element)->first_attr;
    size_t length = 0; /* `name`'s, measured at the first attribute outside the table */
    for (; attr != NULL; attr = attr->next) {
        uintptr_t qualified = attr->qualified_name != 0 ? attr->qualified_name
                                                        : attr->node.local_name;
        if (qualified < ATTR_LAST_ENTRY) {
            if (qualified == id && id != 0) {
                return attr;
            }
            continue;
        }
        if (length == 0) {
            length = strlen(name);
        }
        if (dynamic_id_is(qualified, ATTR_LAST_ENTRY, name, length)) {
            return attr;
        }
    }
    return NULL;
}

static bool
has_value(const lxb_attr *attr)
{
    return attr != NULL && attr->value != NULL && attr->value->data != NULL;
}

/* An attribute's value as str; None when the attribute is absent or has no value (as
 * selectolax's `attributes.get` answers). NULL with an exception set on failure. */
static PyObject *
value_str(const lxb_attr *attr)
{
    if (!has_value(attr)) {
        Py_RETURN_NONE;
    }
    return PyUnicode_DecodeUTF8((const char *) attr->value->data,
                                (Py_ssize_t) attr->value->length, "replace");
}

static PyObject *
attr_value(const lxb_node *element, uintptr_t id, const char *name)
{
    return value_str(find_attr(element, id, name));
}

/* An href worth reading: present and not empty. */
static const lxb_attr *
find_href(const lxb_node *element)
{
    const lxb_attr *href = find_attr(element, ATTR_HREF, "href");
    return has_value(href) && href->value->length > 0 ? href : NULL;
}

/* A src worth reading: present and not empty. */
static const lxb_attr *
find_src(const lxb_node *element)
{
    const lxb_attr *src = find_attr(element, ATTR_SRC, "src");
    return has_value(src) && src->value->length > 0 ? src : NULL;
}

/* Elements whose content is no reader's text and holds nothing the walk reads. */
static bool
dropped_tag(uintptr_t tag)
{
    return tag == TAG_SCRIPT || tag == TAG_STYLE || tag == TAG_TEMPLATE || tag == TAG_IFRAME
           || tag == TAG_NOEMBED || tag == TAG_NOFRAMES;
}

/* role="navigation", the value ASCII case-insensitively: with <nav> and <noscript>, the body's
 * boilerplate, whose text is kept out of snippets (see the top of this file). */
static bool
navigation_role(const lxb_node *element)
{
    const lxb_attr *role = find_attr(element, 0, "role");
    return has_value(role) && role->value->length == 10
           && ascii_ieq(role->value->data, "navigation", 10);
}

static bool
html_whitespace_only(const unsigned char *data, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        unsigned char c = data[i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\f' && c != '\r') {
            return false;
        }
    }
    return true;
}

/* Bytes of the UTF-8 character at `data` if it is one str.isspace() holds for, else 0. */
static size_t
space_at(const unsigned char *data, size_t length)
{
    unsigned char c = data[0];
    if (c < 0x80) {
        return ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20)) ? 1 : 0;
    }
    if (c == 0xc2 && length >= 2) {
        return (data[1] == 0x85 || data[1] == 0xa0) ? 2 : 0; /* U+0085, U+00A0 */
    }
    if (length < 3) {
        return 0;
    }
    if (c == 0xe1) {
        return (data[1] == 0x9a && data[2] == 0x80) ? 3 : 0; /* U+1680 */
    }
    if (c == 0xe2 && data[1] == 0x80) {
        unsigned char d = data[2]; /* U+2000-200A, U+2028, U+2029, U+202F */
        return ((d >= 0x80 && d <= 0x8a) || d == 0xa8 || d == 0xa9 || d == 0xaf) ? 3 : 0;
    }
    if (c == 0xe2 && data[1] == 0x81) {
        return data[2] == 0x9f ? 3 : 0; /* U+205F */
    }
    if (c == 0xe3) {
        return (data[1] == 0x80 && data[2] == 0x80) ? 3 : 0; /* U+3000 */
    }
    return 0;
}

/* Length of the whitespace character that ends at data[length - 1], else 0. */
static size_t
space_before(const unsigned char *data, size_t length)
{
    for (size_t width = 1; width <= 3 && width <= length; width++) {
        const unsigned char *start = data + length - width;
        if ((*start & 0xc0) == 0x80) {
            continue; /* a continuation byte: the character starts earlier */
        }
        return space_at(start, width) == width ? width : 0;
    }
    return 0;
}

/* str.strip() on UTF-8 bytes. */
static void
strip_spaces(const unsigned char **data, size_t *length)
{
    size_t width;
    while (*length > 0 && (width = space_at(*data, *length)) > 0) {
        *data += width;
        *length -= width;
    }
    while (*length > 0 && (width = space_before(*data, *length)) > 0) {
        *length -= width;
    }
}

/* A growing byte buffer of fragments joined by one space. */
typedef struct {
    char *data;
    size_t length;
    size_t capacity;
    Py_ssize_t fragments;
} joined_text;

static int
append_bytes(joined_text *text, const unsigned char *data, size_t length)
{
    size_t needed = text->length + length;
    if (needed > text->capacity) {
        size_t capacity = text->capacity ? text->capacity : 4096;
        while (capacity < needed) {
            capacity *= 2;
        }
        char *grown = PyMem_Realloc(text->data, capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        text->data = grown;
        text->capacity = capacity;
    }
    if (length > 0) {
        memcpy(text->data + text->length, data, length);
        text->length += length;
    }
    return 0;
}

static int
join_fragment(joined_text *text, const unsigned char *data, size_t length)
{
    if (text->fragments > 0 && append_bytes(text, (const unsigned char *) " ", 1) < 0) {
        return -1;
    }
    text->fragments++;
    return append_bytes(text, data, length);
}

static PyObject *
joined_str(const joined_text *text)
{
    return PyUnicode_DecodeUTF8(text->data ? text->data : "", (Py_ssize_t) text->length,
                                "replace");
}

/* The sections open at the walk's position. */
typedef struct {
    long kind;
    long flags;
} open_section;

typedef struct {
    open_section *open;
    Py_ssize_t depth;
    Py_ssize_t capacity;
    long google_noindex;
    long google_nosnippet;
    long opened;
    long flags;
} section_state;

static int
apply_marker(section_state *state, long action, long kind, long flags)
{
    if (action == ACTION_OPEN) {
        if (state->depth == state->capacity) {
            Py_ssize_t capacity = state->capacity ? state->capacity * 2 : 8;
            open_section *grown = PyMem_Realloc(state->open, capacity * sizeof(open_section));
            if (grown == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            state->open = grown;
            state->capacity = capacity;
        }
        state->open[state->depth].kind = kind;
        state->open[state->depth].flags = flags;
        state->depth++;
        state->opened += flags != 0;
    }
    else if (action == ACTION_CLOSE) {
        /* A close ends the latest open section of its kind. */
        for (Py_ssize_t back = state->depth - 1; back >= 0; back--) {
            if (state->open[back].kind == kind) {
                memmove(&state->open[back], &state->open[back + 1],
                        (state->depth - back - 1) * sizeof(open_section));
                state->depth--;
                break;
            }
        }
    }
    else {
        /* googleoff/googleon count per word. */
        long step = action == ACTION_OFF ? 1 : -1;
        if (flags & NOINDEX) {
            state->google_noindex = state->google_noindex + step < 0 ? 0 : state->google_noindex + step;
        }
        if (flags & NOSNIPPET) {
            state->google_nosnippet =
                state->google_nosnippet + step < 0 ? 0 : state->google_nosnippet + step;
        }
        state->opened += action == ACTION_OFF && flags != 0;
    }
    long now = 0;
    for (Py_ssize_t i = 0; i < state->depth; i++) {
        now |= state->open[i].flags;
    }
    if (state->google_noindex > 0) {
        now |= NOINDEX;
    }
    if (state->google_nosnippet > 0) {
        now |= NOSNIPPET;
    }
    state->flags = now;
    return 0;
}

static bool
starts_with_word(const unsigned char *data, size_t length, const char *word)
{
    size_t size = strlen(word);
    return length >= size && ascii_ieq(data, word, size);
}

/* Whether a stripped comment starts as every marker does (`robots`, `google` or `noindex`,
 * maybe after a `/`): most comments (`wp:paragraph`, `/wp:paragraph`) do not, and need no call
 * to `marker_word`, which has the last word. */
static bool
may_be_marker(const unsigned char *data, size_t length)
{
    size_t width;
    if (length > 0 && data[0] == '/') {
        data++;
        length--;
        while (length > 0 && (width = space_at(data, length)) > 0) {
            data += width;
            length -= width;
        }
    }
    return starts_with_word(data, length, "robots") || starts_with_word(data, length, "google")
           || starts_with_word(data, length, "noindex");
}

/* A comment: a marker? `marker_word` decides, for the ones that start like one. */
static int
read_comment(const lxb_node *node, PyObject *marker_word, section_state *state)
{
    const lxb_character_data *comment = (const lxb_character_data *) node;
    const unsigned char *data = comment->data.data;
    size_t length = comment->data.length;
    if (data == NULL) {
        return 0;
    }
    strip_spaces(&data, &length);
    if (!may_be_marker(data, length)) {
        return 0;
    }
    PyObject *content = PyUnicode_DecodeUTF8((const char *) data, (Py_ssize_t) length, "replace");
    if (content == NULL) {
        return -1;
    }
    PyObject *word = PyObject_CallOneArg(marker_word, content);
    Py_DECREF(content);
    if (word == NULL) {
        return -1;
    }
    if (word == Py_None) {
        Py_DECREF(word);
        return 0;
    }
    long action, kind, flags;
    if (!PyArg_ParseTuple(word, "lll", &action, &kind, &flags)) {
        Py_DECREF(word);
        return -1;
    }
    Py_DECREF(word);
    return apply_marker(state, action, kind, flags);
}

/* All text under `node`, concatenated as it is (the title's). */
static int
subtree_text(const lxb_node *root, joined_text *text)
{
    const lxb_node *node = root->first_child;
    while (node != NULL) {
        bool skip = false;
        if (node->type == NODE_TEXT) {
            const lxb_character_data *data = (const lxb_character_data *) node;
            if (data->data.data != NULL
                && append_bytes(text, data->data.data, data->data.length) < 0) {
                return -1;
            }
        }
        else if (node->type == NODE_ELEMENT) {
            skip = dropped_tag(node->local_name);
        }
        if (!skip && node->first_child != NULL) {
            node = node->first_child;
            continue;
        }
        while (node != root && node->next == NULL) {
            node = node->parent;
        }
        if (node == root) {
            break;
        }
        node = node->next;
    }
    return 0;
}

static int
append_new(PyObject *list, PyObject *item)
{
    if (item == NULL) {
        return -1;
    }
    int status = PyList_Append(list, item);
    Py_DECREF(item);
    return status;
}

/* (link, rel, held) appended to `anchors`: 0, or -1 with an exception set. */
static int
append_anchor(PyObject *anchors, const lxb_attr *link, PyObject *rel, bool held)
{
    PyObject *href = value_str(link);
    PyObject *anchor = NULL;
    if (href != NULL && rel != NULL) {
        anchor = PyTuple_Pack(3, href, rel, held ? Py_True : Py_False);
    }
    Py_XDECREF(href);
    return append_new(anchors, anchor);
}

/* --- the walk ---------------------------------------------------------------------------------- */

static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scan(document_address, marker_word, max_anchors)");
        return NULL;
    }
    size_t address = PyLong_AsSize_t(args[0]);
    if (address == (size_t) -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t max_anchors = PyLong_AsSsize_t(args[2]);
    if (max_anchors == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *marker_word = args[1];
    const lxb_node *document = (const lxb_node *) address;

    PyObject *anchors = PyList_New(0);
    PyObject *metas = PyList_New(0);
    PyObject *title = NULL, *base = NULL, *lang = NULL, *result = NULL;
    joined_text text = {0}, nosnippet = {0}, title_text = {0}, headings = {0};
    section_state state = {0};
    bool yandex_element = false, have_title = false;
    const lxb_node *body = NULL, *html = NULL;
    bool in_body = false;
    /* The outermost boilerplate element and heading the walk is inside, if any; `headings` as
     * it was before that heading, to take back the space it joined with if it adds no text.
     * `watched` is the innermost of body, boilerplate and heading: the one the walk leaves
     * first, so that leaving a node costs one comparison. */
    const lxb_node *boilerplate = NULL, *heading = NULL, *watched = NULL;
    size_t headings_length = 0;
    Py_ssize_t headings_fragments = 0;
    if (anchors == NULL || metas == NULL) {
        goto done;
    }

    const lxb_node *node = document != NULL ? document->first_child : NULL;
    while (node != NULL) {
        bool descend = true;
        if (node->type == NODE_TEXT) {
            const lxb_character_data *data = (const lxb_character_data *) node;
            const unsigned char *bytes = data->data.data;
            size_t length = data->data.length;
            if (bytes != NULL && !(state.flags & NOINDEX)
                && !html_whitespace_only(bytes, length)) {
                joined_text *into = (state.flags & NOSNIPPET) ? &nosnippet
                                    : !in_body            ? NULL
                                    : boilerplate != NULL ? &nosnippet
                                                          : &text;
                if (into != NULL) {
                    strip_spaces(&bytes, &length);
                    if (join_fragment(into, bytes, length) < 0) {
                        goto done;
                    }
                    if (heading != NULL && into == &text
                        && join_fragment(&headings, bytes, length) < 0) {
                        goto done;
                    }
                }
            }
        }
        else if (node->type == NODE_COMMENT) {
            if (read_comment(node, marker_word, &state) < 0) {
                goto done;
            }
        }
        else if (node->type == NODE_ELEMENT) {
            uintptr_t tag = node->local_name;
            const lxb_attr *href_attr;
            bool held = (state.flags & NOFOLLOW) != 0;
            bool room = PyList_GET_SIZE(anchors) < max_anchors;
            if (room && (tag == TAG_IFRAME || tag == TAG_FRAME)
                && (href_attr = find_src(node)) != NULL) {
                if (append_anchor(anchors, href_attr, Py_None, held) < 0) {
                    goto done;
                }
            }
            if (dropped_tag(tag)) {
                descend = false;
                goto next;
            }
            switch (tag) {
            case TAG_A:
            case TAG_AREA:
                if (room && (href_attr = find_href(node)) != NULL) {
                    PyObject *rel = attr_value(node, ATTR_REL, "rel");
                    int appended = rel != NULL ? append_anchor(anchors, href_attr, rel, held) : -1;
                    Py_XDECREF(rel);
                    if (appended < 0) {
                        goto done;
                    }
                }
                break;
            case TAG_META: {
                PyObject *name = attr_value(node, 0, "name");
                PyObject *equiv = name != NULL ? attr_value(node, ATTR_HTTP_EQUIV, "http-equiv") : NULL;
                PyObject *content = NULL, *meta = NULL;
                if (equiv != NULL && name == Py_None && equiv == Py_None) {
                    Py_DECREF(name);
                    Py_DECREF(equiv);
                    break; /* neither: nothing the page step reads */
                }
                if (equiv != NULL) {
                    content = attr_value(node, ATTR_CONTENT, "content");
                }
                if (content != NULL) {
                    meta = PyTuple_Pack(3, name, content, equiv);
                }
                Py_XDECREF(name);
                Py_XDECREF(equiv);
                Py_XDECREF(content);
                if (append_new(metas, meta) < 0) {
                    goto done;
                }
                break;
            }
            case TAG_TITLE:
                if (!have_title) {
                    have_title = true;
                    if (subtree_text(node, &title_text) < 0) {
                        goto done;
                    }
                }
                break;
            case TAG_BASE:
                if (base == NULL && (href_attr = find_href(node)) != NULL) {
                    base = value_str(href_attr);
                    if (base == NULL) {
                        goto done;
                    }
                }
                break;
            case TAG_HTML:
                if (html == NULL && node->parent == document) {
                    html = node;
                    lang = attr_value(node, ATTR_LANG, "lang");
                    if (lang == NULL) {
                        goto done;
                    }
                }
                break;
            case TAG_BODY:
                if (body == NULL && html != NULL && node->parent == html) {
                    body = watched = node;
                    in_body = true;
                }
                break;
            case TAG_NAV:
            case TAG_NOSCRIPT:
                if (in_body && boilerplate == NULL) {
                    boilerplate = watched = node;
                }
                break;
            case TAG_H1:
            case TAG_H2:
            case TAG_H3:
            case TAG_H4:
            case TAG_H5:
            case TAG_H6:
            case TAG_DT:
            case TAG_DFN:
                if (in_body && heading == NULL) {
                    heading = watched = node;
                    headings_length = headings.length;
                    headings_fragments = headings.fragments;
                }
                break;
            default:
                if (tag >= TAG_LAST_ENTRY && unknown_tag_is(node, "noindex")) {
                    yandex_element = true;
                }
            }
            if (in_body && boilerplate == NULL
                && ((const lxb_element *) node)->first_attr != NULL && navigation_role(node)) {
                boilerplate = watched = node;
            }
        }

    next:
        if (descend && node->first_child != NULL) {
            node = node->first_child;
            continue;
        }
        /* On to the next node in document order; a node whose subtree is done may be <body>,
         * the boilerplate or the heading the walk was in. */
        while (node != NULL && node != document) {
            if (node == watched) {
                if (node == heading) {
                    /* One that added no text (at most a fragment "" and its space) is left out. */
                    if (headings.length <= headings_length + (headings_fragments > 0)) {
                        headings.length = headings_length;
                        headings.fragments = headings_fragments;
                    }
                    heading = NULL;
                }
                if (node == boilerplate) {
                    boilerplate = NULL;
                }
                if (node == body) {
                    in_body = false;
                }
                /* Of the two, at most one is still open, and it holds the one just left. */
                watched = heading != NULL ? heading : boilerplate != NULL ? boilerplate
                                                      : in_body           ? body
                                                                          : NULL;
            }
            if (node->next != NULL) {
                break;
            }
            node = node->parent;
        }
        node = (node != NULL && node != document) ? node->next : NULL;
    }

    title = have_title ? joined_str(&title_text) : Py_NewRef(Py_None);
    if (title == NULL) {
        goto done;
    }
    PyObject *text_str = joined_str(&text);
    PyObject *nosnippet_str = text_str != NULL ? joined_str(&nosnippet) : NULL;
    PyObject *headings_str = nosnippet_str != NULL ? joined_str(&headings) : NULL;
    if (headings_str != NULL) {
        result = Py_BuildValue("(OOOOOOOOnO)", anchors, metas, title, base ? base : Py_None,
                               lang ? lang : Py_None, text_str, nosnippet_str, headings_str,
                               (Py_ssize_t) state.opened, yandex_element ? Py_True : Py_False);
    }
    Py_XDECREF(text_str);
    Py_XDECREF(nosnippet_str);
    Py_XDECREF(headings_str);

done:
    Py_XDECREF(anchors);
    Py_XDECREF(metas);
    Py_XDECREF(title);
    Py_XDECREF(base);
    Py_XDECREF(lang);
    PyMem_Free(text.data);
    PyMem_Free(nosnippet.data);
    PyMem_Free(title_text.data);
    PyMem_Free(headings.data);
    PyMem_Free(state.open);
    return result;
}

/* --- links ----------------------------------------------------------------------------------- */

/* Characters crawler.urls.LinkResolver takes as they are (its _PLAIN_HREF). */
static bool
plain_href_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || (c != 0 && strchr("-._~!&'()+,;=:@/?[]*$", c) != NULL);
}

/* Whether `url` (no fragment, plain characters) is in normal form as crawler.urls.normalize_url
 * sees at once (its _NORMAL_URL): `http(s)://` a lower-case host, a port other than the
 * scheme's own, then a path. Dot segments are checked by the caller. */
static bool
already_normal(const char *url, Py_ssize_t length)
{
    Py_ssize_t at;
    const char *default_port;
    if (length >= 7 && memcmp(url, "http://", 7) == 0) {
        at = 7;
        default_port = "80";
    }
    else if (length >= 8 && memcmp(url, "https://", 8) == 0) {
        at = 8;
        default_port = "443";
    }
    else {
        return false;
    }
    Py_ssize_t host = at;
    while (at < length && ((url[at] >= 'a' && url[at] <= 'z') || (url[at] >= '0' && url[at] <= '9')
                           || url[at] == '-' || url[at] == '.')) {
        at++;
    }
    if (at == host || url[at - 1] == '.') {
        return false;
    }
    if (at < length && url[at] == ':') {
        Py_ssize_t port = ++at;
        long value = 0;
        while (at < length && url[at] >= '0' && url[at] <= '9' && at - port < 6) {
            value = value * 10 + (url[at] - '0');
            at++;
        }
        size_t digits = (size_t) (at - port);
        if (digits == 0 || digits > 5 || url[port] == '0' || value > 65535
            || (digits == strlen(default_port) && memcmp(url + port, default_port, digits) == 0)) {
            return false;
        }
    }
    return at < length && url[at] == '/';
}

/* RFC 3986 section 5.2.4 on `path` (starting with `/`, no query), as
 * crawler.canonical_urls.remove_dot_segments: `/a/./b/../c` -> `/a/c`. Into `out`, room for
 * `length` bytes (it never grows), with `before`, room for `length` offsets; the length written.
 * `out` is "/" and the kept segments joined by "/"; `before[k]` is its length before the k-th
 * kept segment (and its "/") went in, where a `..` cuts it back to. */
static Py_ssize_t
remove_dot_segments(const char *path, Py_ssize_t length, char *out, Py_ssize_t *before)
{
    Py_ssize_t used = 1, kept = 0, at = 1;
    out[0] = '/';
    while (true) {
        const char *slash = memchr(path + at, '/', (size_t) (length - at));
        Py_ssize_t end = slash != NULL ? slash - path : length;
        bool last = slash == NULL;
        Py_ssize_t size = end - at;
        bool dot = size == 1 && path[at] == '.';
        bool dotdot = size == 2 && path[at] == '.' && path[at + 1] == '.';
        if (dotdot && kept > 0) {
            used = before[--kept];
        }
        if (!dot && !dotdot) {
            before[kept++] = used;
            if (kept > 1) {
                out[used++] = '/';
            }
            memcpy(out + used, path + at, (size_t) size);
            used += size;
        }
        else if (last) {
            before[kept++] = used; /* an empty last segment: the path ends with "/" */
            if (kept > 1) {
                out[used++] = '/';
            }
        }
        if (last) {
            return used;
        }
        at = end + 1;
    }
}

/* origin + prefix + href, its path's dot segments removed (LinkResolver's `remove_dot_segments`
 * on the path before any query). */
static PyObject *
joined_without_dots(const char *origin, Py_ssize_t origin_length, const char *prefix,
                    Py_ssize_t prefix_length, const char *href, Py_ssize_t length)
{
    Py_ssize_t tail_length = prefix_length + length;
    char *tail = PyMem_Malloc((size_t) (2 * tail_length + origin_length + 1));
    Py_ssize_t *before = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t) (tail_length + 1));
    if (tail == NULL || before == NULL) {
        PyMem_Free(tail);
        PyMem_Free(before);
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(tail, prefix, (size_t) prefix_length);
    memcpy(tail + prefix_length, href, (size_t) length);
    const char *mark = memchr(tail, '?', (size_t) tail_length);
    Py_ssize_t path_length = mark != NULL ? mark - tail : tail_length;
    char *out = tail + tail_length;
    memcpy(out, origin, (size_t) origin_length);
    Py_ssize_t used
        = origin_length + remove_dot_segments(tail, path_length, out + origin_length, before);
    memcpy(out + used, tail + path_length, (size_t) (tail_length - path_length));
    used += tail_length - path_length;
    PyObject *link = PyUnicode_DecodeASCII(out, used, NULL);
    PyMem_Free(tail);
    PyMem_Free(before);
    return link;
}

/* The base's (origin, directory) as join_href takes them: the short path needs an ASCII base
 * (normal URLs are) that the directory extends; false when it cannot be taken. */
static bool
short_path_of(PyObject *origin_str, PyObject *directory_str, const char **origin,
              Py_ssize_t *origin_length, const char **directory, Py_ssize_t *directory_length)
{
    if (!PyUnicode_IS_ASCII(origin_str) || !PyUnicode_IS_ASCII(directory_str)
        || PyUnicode_GET_LENGTH(directory_str) < PyUnicode_GET_LENGTH(origin_str)) {
        return false;
    }
    *origin = (const char *) PyUnicode_1BYTE_DATA(origin_str);
    *origin_length = PyUnicode_GET_LENGTH(origin_str);
    *directory = (const char *) PyUnicode_1BYTE_DATA(directory_str) + *origin_length;
    *directory_length = PyUnicode_GET_LENGTH(directory_str) - *origin_length;
    return memcmp(PyUnicode_1BYTE_DATA(directory_str), *origin, (size_t) *origin_length) == 0;
}

/* LinkResolver's short path, for the hrefs that need only joining (`/a/b.html`, `b/c.html?x=1`)
 * or that are already normal (`https://host/a`), with any fragment dropped. NULL without an
 * exception for every other href (dot segments, `//host`, `?q`, other schemes, upper case in a
 * scheme or host, anything to encode): LinkResolver itself takes those. */
static PyObject *
join_href(PyObject *href, const char *origin, Py_ssize_t origin_length, const char *directory,
          Py_ssize_t directory_length)
{
    if (!PyUnicode_IS_ASCII(href)) {
        return NULL;
    }
    const char *data = (const char *) PyUnicode_1BYTE_DATA(href);
    Py_ssize_t length = PyUnicode_GET_LENGTH(href);
    const char *hash = memchr(data, '#', (size_t) length);
    if (hash != NULL) {
        length = hash - data;
    }
    if (length == 0 || data[length - 1] == '?' || data[0] == '?') {
        return NULL;
    }
    bool colon = false;
    for (Py_ssize_t i = 0; i < length; i++) {
        if (!plain_href_char((unsigned char) data[i])) {
            return NULL;
        }
        colon |= data[i] == ':';
    }
    const char *prefix = directory;
    Py_ssize_t prefix_length = directory_length;
    if (colon) {
        /* A scheme, or a relative path LinkResolver checks for one. */
        if (!already_normal(data, length)) {
            return NULL;
        }
        origin_length = prefix_length = 0;
    }
    else if (data[0] == '/') {
        if (length > 1 && data[1] == '/') {
            return NULL;
        }
        prefix_length = 0;
    }
    /* Dot segments: "/." anywhere in the joined path, or at the seam. */
    bool dots = data[0] == '.' && (prefix_length == 0 || prefix[prefix_length - 1] == '/');
    for (Py_ssize_t i = 0; i + 1 < length && !dots; i++) {
        dots = data[i] == '/' && data[i + 1] == '.';
    }
    if (dots) {
        /* An absolute URL with them is normalize_url's slow path; a joined one is resolved
         * here, as LinkResolver resolves it. */
        return colon ? NULL
                     : joined_without_dots(origin, origin_length, prefix, prefix_length, data,
                                           length);
    }
    PyObject *link = PyUnicode_New(origin_length + prefix_length + length, 127);
    if (link == NULL) {
        return NULL;
    }
    char *out = (char *) PyUnicode_1BYTE_DATA(link);
    memcpy(out, origin, (size_t) origin_length);
    memcpy(out + origin_length, prefix, (size_t) prefix_length);
    memcpy(out + origin_length + prefix_length, data, (size_t) length);
    return link;
}

/* rel.lower().split() has nofollow, ugc or sponsored. Tokens are split where str.split() splits
 * and compared ASCII case-insensitively: no other character lowers to a letter of those words
 * (only U+212A KELVIN SIGN lowers to ASCII, to `k`). */
static bool
rel_says_nofollow(PyObject *rel)
{
    static const char *const words[] = {"nofollow", "ugc", "sponsored"};
    if (rel == Py_None) {
        return false;
    }
    int kind = PyUnicode_KIND(rel);
    const void *data = PyUnicode_DATA(rel);
    Py_ssize_t length = PyUnicode_GET_LENGTH(rel), at = 0;
    while (at < length) {
        while (at < length && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, at))) {
            at++;
        }
        Py_ssize_t start = at;
        while (at < length && !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, at))) {
            at++;
        }
        for (size_t w = 0; w < 3; w++) {
            Py_ssize_t size = (Py_ssize_t) strlen(words[w]);
            if (at - start != size) {
                continue;
            }
            Py_ssize_t i = 0;
            for (; i < size; i++) {
                Py_UCS4 c = PyUnicode_READ(kind, data, start + i);
                if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (Py_UCS4) words[w][i]) {
                    break;
                }
            }
            if (i == size) {
                return true;
            }
        }
    }
    return false;
}

static PyObject *
dict_keys_tuple(PyObject *dict, PyObject *except)
{
    PyObject *keys = PyList_New(0), *key, *value, *result;
    Py_ssize_t at = 0;
    if (keys == NULL) {
        return NULL;
    }
    while (PyDict_Next(dict, &at, &key, &value)) {
        if (except != NULL) {
            int contained = PyDict_Contains(except, key);
            if (contained < 0) {
                Py_DECREF(keys);
                return NULL;
            }
            if (contained) {
                continue;
            }
        }
        if (PyList_Append(keys, key) < 0) {
            Py_DECREF(keys);
            return NULL;
        }
    }
    result = PyList_AsTuple(keys);
    Py_DECREF(keys);
    return result;
}

static PyObject *
links(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "links(anchors, resolve, unusable_error, follow, obey_rel, "
                        "(origin, directory))");
        return NULL;
    }
    PyObject *anchors = args[0], *resolve = args[1], *unusable_error = args[2];
    int follow = PyObject_IsTrue(args[3]), obey_rel = PyObject_IsTrue(args[4]);
    const char *origin = NULL, *directory = NULL;
    Py_ssize_t origin_length = 0, directory_length = 0;
    PyObject *origin_str, *directory_str;
    if (follow < 0 || obey_rel < 0 || !PyList_Check(anchors)
        || !PyArg_ParseTuple(args[5], "UU", &origin_str, &directory_str)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "anchors must be a list");
        }
        return NULL;
    }
    bool short_path = short_path_of(origin_str, directory_str, &origin, &origin_length, &directory,
                                    &directory_length);

    PyObject *followed = PyDict_New(), *held_back = PyDict_New(), *result = NULL;
    Py_ssize_t unusable = 0;
    if (followed == NULL || held_back == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(anchors); i++) {
        PyObject *anchor = PyList_GET_ITEM(anchors, i);
        if (!PyTuple_Check(anchor) || PyTuple_GET_SIZE(anchor) != 3
            || !PyUnicode_Check(PyTuple_GET_ITEM(anchor, 0))) {
            PyErr_SetString(PyExc_TypeError, "an anchor is (href, rel, held)");
            goto done;
        }
        PyObject *href = PyTuple_GET_ITEM(anchor, 0);
        PyObject *link = short_path ? join_href(href, origin, origin_length, directory,
                                                directory_length)
                                    : NULL;
        if (link == NULL && PyErr_Occurred()) {
            goto done;
        }
        if (link == NULL) {
            link = PyObject_CallOneArg(resolve, href);
            if (link == NULL) {
                if (!PyErr_ExceptionMatches(unusable_error)) {
                    goto done;
                }
                PyErr_Clear();
                unusable++;
                continue;
            }
        }
        int allowed = follow && !PyObject_IsTrue(PyTuple_GET_ITEM(anchor, 2));
        PyObject *rel = PyTuple_GET_ITEM(anchor, 1);
        if (rel != Py_None && !PyUnicode_Check(rel)) {
            Py_DECREF(link);
            PyErr_SetString(PyExc_TypeError, "an anchor's rel is str or None");
            goto done;
        }
        if (allowed && obey_rel && rel_says_nofollow(rel)) {
            allowed = 0;
        }
        int status = PyDict_SetItem(allowed ? followed : held_back, link, Py_None);
        Py_DECREF(link);
        if (status < 0) {
            goto done;
        }
    }
    PyObject *followed_links = dict_keys_tuple(followed, NULL);
    PyObject *held_links = followed_links != NULL ? dict_keys_tuple(held_back, followed) : NULL;
    if (held_links != NULL) {
        result = Py_BuildValue("(OOn)", followed_links, held_links, unusable);
    }
    Py_XDECREF(followed_links);
    Py_XDECREF(held_links);

done:
    Py_XDECREF(followed);
    Py_XDECREF(held_back);
    return result;
}

/* --- the layout handshake ------------------------------------------------------------------
 * Fields read in place, for crawler.page.compiled to compare with what selectolax reports from
 * Python before any walk is trusted. Each reads one struct at an address selectolax gave (or a
 * field of one that an earlier comparison vouched for) and follows no pointer, so a layout that
 * differs shows as numbers that disagree, not as a crash. */

static bool
address_of(PyObject *number, uintptr_t *address)
{
    size_t value = PyLong_AsSize_t(number);
    if (value == (size_t) -1 && PyErr_Occurred()) {
        return false;
    }
    if (value == 0) {
        PyErr_SetString(PyExc_ValueError, "address 0");
        return false;
    }
    *address = (uintptr_t) value;
    return true;
}

static PyObject *
node_fields(PyObject *module, PyObject *number)
{
    uintptr_t address;
    if (!address_of(number, &address)) {
        return NULL;
    }
    const lxb_node *node = (const lxb_node *) address;
    return Py_BuildValue("(KKKKKiK)", (unsigned long long) (uintptr_t) node->parent,
                         (unsigned long long) (uintptr_t) node->first_child,
                         (unsigned long long) (uintptr_t) node->last_child,
                         (unsigned long long) (uintptr_t) node->next,
                         (unsigned long long) (uintptr_t) node->prev, node->type,
                         (unsigned long long) node->local_name);
}

static PyObject *
element_fields(PyObject *module, PyObject *number)
{
    uintptr_t address;
    if (!address_of(number, &address)) {
        return NULL;
    }
    const lxb_element *element = (const lxb_element *) address;
    return Py_BuildValue("(KK)", (unsigned long long) (uintptr_t) element->first_attr,
                         (unsigned long long) (uintptr_t) element->last_attr);
}

static PyObject *
attr_fields(PyObject *module, PyObject *number)
{
    uintptr_t address;
    if (!address_of(number, &address)) {
        return NULL;
    }
    const lxb_attr *attr = (const lxb_attr *) address;
    return Py_BuildValue("(KKK)", (unsigned long long) (uintptr_t) attr->owner,
                         (unsigned long long) (uintptr_t) attr->next,
                         (unsigned long long) (uintptr_t) attr->prev);
}

static PyObject *
text_length(PyObject *module, PyObject *number)
{
    uintptr_t address;
    if (!address_of(number, &address)) {
        return NULL;
    }
    return PyLong_FromSize_t(((const lxb_character_data *) address)->data.length);
}

/* --- the prescan ------------------------------------------------------------------------------
 * crawler.page.bounds.python_prescan in C: where a page first crosses a bound of the tree-building
 * work the parser would do on it (see crawler/page/bounds.py, the reference, for the model). */

enum { LIMIT_NONE = 0, LIMIT_DEPTH = 1, LIMIT_WORK = 2, LIMIT_MARKERS = 3 };
enum { ELEMENT_COST = 50, WINDOW = 8 };

static bool
html_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static bool
same_name(const unsigned char *one, size_t one_length, const unsigned char *other,
          size_t other_length)
{
    if (one_length != other_length) {
        return false;
    }
    for (size_t i = 0; i < one_length; i++) {
        unsigned char a = one[i], b = other[i];
        if ((a >= 'A' && a <= 'Z' ? a + 32 : a) != (b >= 'A' && b <= 'Z' ? b + 32 : b)) {
            return false;
        }
    }
    return true;
}

/* What the model knows of a tag name: its class and the groups it belongs to and closes. */
enum {
    IS_RAW_TEXT = 1 << 0,
    IS_VOID = 1 << 1,
    IS_FOREIGN = 1 << 2,
    IS_PLAINTEXT = 1 << 3,
    IS_NOINDEX = 1 << 4,
    IS_SCOPE = 1 << 5,   /* a check for an element in (default) scope stops at it */
    IS_SPECIAL = 1 << 6, /* the HTML standard's special category */
    STOP_ALL = 1 << 7,   /* as `stops`: only the current node is looked at */
    M_P = 1 << 8,
    M_LI = 1 << 9,
    M_DT = 1 << 10,
    M_DD = 1 << 11,
    M_OPTION = 1 << 12,
    M_OPTGROUP = 1 << 13,
    M_TR = 1 << 14,
    M_TD = 1 << 15,
    M_TH = 1 << 16,
    M_A = 1 << 17,
    M_BUTTON = 1 << 18,
    M_NOBR = 1 << 19,
    IS_FORMATTING = 1 << 20, /* kept in the list of active formatting elements */
    IS_MARKER = 1 << 21,     /* puts a marker in that list */
    IS_TABLE_BOUNDARY = 1 << 22, /* a check for an element in table scope stops at it */
    IS_LIST = 1 << 23,           /* a check for one in list item scope stops at it too */
    IS_LIST_STOP = 1 << 24,      /* the search for the <li> an <li> closes stops at it */
    IS_TABLE_PART = 1 << 25,     /* its end tag is looked for in table scope */
    PAST_DEPTH = 1 << 29,        /* on the model's stack only: opened past max_depth */
    IN_FOREIGN = 1 << 30,        /* on the model's stack only: in SVG or MathML */
};

/* As crawler.page.tag_classes.BREAKOUT_TAGS and INTEGRATION_POINTS; NULL ends each. */
static const char *const BREAKOUT_TAGS[] = {
    "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em",
    "embed", "font", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li",
    "listing", "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong",
    "strike", "sub", "sup", "table", "tt", "u", "ul", "var", NULL,
};
static const char *const INTEGRATION_POINTS[] = {
    "foreignobject", "desc", "title", "mi", "mo", "mn", "ms", "mtext", "annotation-xml", NULL,
};

typedef struct {
    const char *name;
    unsigned flags;  /* IS_* and the M_* it is */
    unsigned closes; /* the M_* of an open element its start tag closes, near the top */
    unsigned stops;  /* the IS_* of an open element the search for those stops at */
} tag_class;

/* The same table as crawler.page.tag_classes.TAG_CLASSES (a test compares them). */
static const tag_class TAG_CLASSES[] = {
    {"script", IS_RAW_TEXT, 0, 0},
    {"style", IS_RAW_TEXT, 0, 0},
    {"xmp", IS_RAW_TEXT, M_P, IS_SCOPE | M_BUTTON},
    {"iframe", IS_RAW_TEXT, 0, 0},
    {"noembed", IS_RAW_TEXT, 0, 0},
    {"noframes", IS_RAW_TEXT, 0, 0},
    {"textarea", IS_RAW_TEXT, 0, 0},
    {"title", IS_RAW_TEXT, 0, 0},
    {"area", IS_VOID, 0, 0},
    {"base", IS_VOID, 0, 0},
    {"basefont", IS_VOID, 0, 0},
    {"bgsound", IS_VOID, 0, 0},
    {"br", IS_VOID, 0, 0},
    {"col", IS_VOID, 0, 0},
    {"embed", IS_VOID, 0, 0},
    {"frame", IS_VOID, 0, 0},
    {"hr", IS_VOID, 0, 0},
    {"img", IS_VOID, 0, 0},
    {"input", IS_VOID, 0, 0},
    {"keygen", IS_VOID, 0, 0},
    {"link", IS_VOID, 0, 0},
    {"meta", IS_VOID, 0, 0},
    {"param", IS_VOID, 0, 0},
    {"source", IS_VOID, 0, 0},
    {"track", IS_VOID, 0, 0},
    {"wbr", IS_VOID, 0, 0},
    {"html", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_BOUNDARY, 0, 0},
    {"table", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_BOUNDARY | IS_TABLE_PART, M_P, IS_SCOPE | M_BUTTON},
    {"td", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART | IS_MARKER | M_TD, M_TD | M_TH, IS_TABLE_BOUNDARY},
    {"th", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART | IS_MARKER | M_TH, M_TD | M_TH, IS_TABLE_BOUNDARY},
    {"caption", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART | IS_MARKER, 0, 0},
    {"marquee", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_MARKER, 0, 0},
    {"object", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_MARKER, 0, 0},
    {"applet", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_MARKER, 0, 0},
    {"template", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP | IS_TABLE_BOUNDARY | IS_MARKER, 0, 0},
    {"mi", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"mo", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"mn", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"ms", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"mtext", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"annotation-xml", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"foreignobject", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"desc", IS_SCOPE | IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"address", IS_SPECIAL, M_P, IS_SCOPE | M_BUTTON},
    {"article", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"aside", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"blockquote", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"body", IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"button", IS_SPECIAL | IS_LIST_STOP | M_BUTTON, M_BUTTON, IS_SCOPE},
    {"center", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"colgroup", IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"dd", IS_SPECIAL | IS_LIST_STOP | M_DD, M_DT | M_DD | M_P, IS_LIST_STOP},
    {"details", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"dir", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"div", IS_SPECIAL, M_P, IS_SCOPE | M_BUTTON},
    {"dl", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"dt", IS_SPECIAL | IS_LIST_STOP | M_DT, M_DT | M_DD | M_P, IS_LIST_STOP},
    {"fieldset", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"figcaption", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"figure", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"footer", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"form", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"frameset", IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"h1", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"h2", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"h3", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"h4", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"h5", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"h6", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"head", IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"header", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"hgroup", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"li", IS_SPECIAL | IS_LIST_STOP | M_LI, M_LI | M_P, IS_LIST_STOP},
    {"listing", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"main", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"menu", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"nav", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"noscript", IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"ol", IS_SPECIAL | IS_LIST_STOP | IS_LIST, M_P, IS_SCOPE | M_BUTTON},
    {"p", IS_SPECIAL | M_P, M_P, IS_SCOPE | M_BUTTON},
    {"pre", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"search", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"section", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"select", IS_SPECIAL | IS_LIST_STOP, 0, 0},
    {"summary", IS_SPECIAL | IS_LIST_STOP, M_P, IS_SCOPE | M_BUTTON},
    {"tbody", IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART, 0, 0},
    {"tfoot", IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART, 0, 0},
    {"thead", IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART, 0, 0},
    {"tr", IS_SPECIAL | IS_LIST_STOP | IS_TABLE_PART | M_TR, M_TR | M_TD | M_TH, IS_TABLE_BOUNDARY},
    {"ul", IS_SPECIAL | IS_LIST_STOP | IS_LIST, M_P, IS_SCOPE | M_BUTTON},
    {"dialog", 0, M_P, IS_SCOPE | M_BUTTON},
    {"plaintext", IS_PLAINTEXT, M_P, IS_SCOPE | M_BUTTON},
    {"option", M_OPTION, M_OPTION, STOP_ALL},
    {"optgroup", M_OPTGROUP, M_OPTION | M_OPTGROUP, STOP_ALL},
    {"a", IS_FORMATTING | M_A, M_A, IS_SPECIAL},
    {"nobr", IS_FORMATTING | M_NOBR, M_NOBR, IS_SPECIAL},
    {"b", IS_FORMATTING, 0, 0},
    {"big", IS_FORMATTING, 0, 0},
    {"code", IS_FORMATTING, 0, 0},
    {"em", IS_FORMATTING, 0, 0},
    {"font", IS_FORMATTING, 0, 0},
    {"i", IS_FORMATTING, 0, 0},
    {"s", IS_FORMATTING, 0, 0},
    {"small", IS_FORMATTING, 0, 0},
    {"strike", IS_FORMATTING, 0, 0},
    {"strong", IS_FORMATTING, 0, 0},
    {"tt", IS_FORMATTING, 0, 0},
    {"u", IS_FORMATTING, 0, 0},
    {"svg", IS_FOREIGN, 0, 0},
    {"math", IS_FOREIGN, 0, 0},
    {"noindex", IS_NOINDEX, 0, 0},
};
#define TAG_CLASS_COUNT (sizeof(TAG_CLASSES) / sizeof(TAG_CLASSES[0]))
#define LONGEST_CLASSED 14 /* "annotation-xml" */

/* TAG_CLASSES by the first letter of the name, each list ended by -1 (filled at import). */
#define PER_LETTER 16
static signed char BY_LETTER[26][PER_LETTER + 1];

static int
index_tag_classes(void)
{
    size_t filled[26] = {0};
    memset(BY_LETTER, -1, sizeof(BY_LETTER));
    for (size_t i = 0; i < TAG_CLASS_COUNT; i++) {
        int letter = TAG_CLASSES[i].name[0] - 'a';
        if (letter < 0 || letter >= 26 || filled[letter] == PER_LETTER) {
            PyErr_SetString(PyExc_SystemError, "TAG_CLASSES does not fit its index");
            return -1;
        }
        BY_LETTER[letter][filled[letter]++] = (signed char) i;
    }
    return 0;
}

static const tag_class *
class_of(const unsigned char *name, size_t length)
{
    char lower[LONGEST_CLASSED + 1];
    if (length > LONGEST_CLASSED) {
        return NULL;
    }
    for (size_t i = 0; i < length; i++) {
        unsigned char c = name[i];
        lower[i] = (char) (c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    lower[length] = 0;
    int letter = lower[0] - 'a';
    if (letter < 0 || letter >= 26) {
        return NULL;
    }
    for (const signed char *index = BY_LETTER[letter]; *index >= 0; index++) {
        if (strcmp(TAG_CLASSES[*index].name, lower) == 0) {
            return &TAG_CLASSES[*index];
        }
    }
    return NULL;
}

static const unsigned char *
find_byte(const unsigned char *at, const unsigned char *end, unsigned char c)
{
    return at < end ? memchr(at, c, (size_t) (end - at)) : NULL;
}

static const unsigned char *
find_comment_end(const unsigned char *at, const unsigned char *end)
{
    while ((at = find_byte(at, end, '-')) != NULL) {
        if (end - at >= 3 && at[1] == '-' && at[2] == '>') {
            return at;
        }
        at++;
    }
    return NULL;
}

/* `</name` followed by whitespace, `/` or `>`, ASCII case-insensitively. */
static const unsigned char *
find_raw_text_end(const unsigned char *at, const unsigned char *end, const unsigned char *name,
                  size_t length)
{
    while ((at = find_byte(at, end, '<')) != NULL) {
        if ((size_t) (end - at) >= length + 3 && at[1] == '/'
            && same_name(at + 2, length, name, length)) {
            unsigned char after = at[2 + length];
            if (html_space(after) || after == '/' || after == '>') {
                return at;
            }
        }
        at++;
    }
    return NULL;
}

static bool
marker_comment(const unsigned char *at, const unsigned char *end)
{
    size_t left = (size_t) (end - at) < 64 ? (size_t) (end - at) : 64;
    const unsigned char *stop = at + left;
    while (at < stop && html_space(*at)) at++;
    if (at < stop && *at == '/') {
        at++;
        while (at < stop && html_space(*at)) at++;
    }
    size_t rest = (size_t) (stop - at);
    return starts_with_word(at, rest, "robots") || starts_with_word(at, rest, "google")
           || starts_with_word(at, rest, "noindex");
}

/* The model's stack of open elements and list of active formatting elements (see OpenElements in
 * crawler/page/open_elements.py). */
typedef struct {
    const unsigned char *name; /* in the source; compared ASCII case-insensitively */
    size_t length;
    unsigned flags; /* its tag_class's */
} open_element;

typedef struct {
    const unsigned char *name; /* NULL: a marker */
    size_t length;
    const unsigned char *attributes; /* as written, compared byte for byte */
    size_t attributes_length;
} formatting_entry;

typedef struct {
    open_element *open;
    Py_ssize_t depth;
    Py_ssize_t real; /* the elements on the stack the parser has open: not PAST_DEPTH */
    Py_ssize_t capacity;
    formatting_entry *list;
    Py_ssize_t entries;
    Py_ssize_t list_capacity;
} model;

static int
grow(void **items, Py_ssize_t *capacity, Py_ssize_t used, size_t size)
{
    if (used < *capacity) {
        return 0;
    }
    Py_ssize_t grown_capacity = *capacity ? *capacity * 2 : 64;
    void *grown = PyMem_Realloc(*items, (size_t) grown_capacity * size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *items = grown;
    *capacity = grown_capacity;
    return 0;
}

static Py_ssize_t
model_active(const model *m)
{
    Py_ssize_t count = 0;
    for (Py_ssize_t i = m->entries - 1; i >= 0 && m->list[i].name != NULL; i--) {
        count++;
    }
    return count;
}

static void
clear_to_marker(model *m)
{
    while (m->entries > 0) {
        m->entries--;
        if (m->list[m->entries].name == NULL) {
            break;
        }
    }
}

static void
pop_from(model *m, Py_ssize_t position)
{
    for (Py_ssize_t i = position; i < m->depth; i++) {
        if (m->open[i].flags & PAST_DEPTH) {
            continue; /* never the parser's: in no list */
        }
        m->real--;
        if (m->open[i].flags & IS_MARKER) {
            clear_to_marker(m);
        }
    }
    m->depth = position;
}

static void
forget(model *m, const unsigned char *name, size_t length)
{
    for (Py_ssize_t i = m->entries - 1; i >= 0 && m->list[i].name != NULL; i--) {
        if (same_name(m->list[i].name, m->list[i].length, name, length)) {
            memmove(&m->list[i], &m->list[i + 1],
                    (size_t) (m->entries - i - 1) * sizeof(formatting_entry));
            m->entries--;
            return;
        }
    }
}

static int
add_formatting(model *m, const unsigned char *name, size_t length,
               const unsigned char *attributes, size_t attributes_length)
{
    Py_ssize_t same = 0, earliest = -1;
    if (name != NULL) {
        for (Py_ssize_t i = m->entries - 1; i >= 0 && m->list[i].name != NULL; i--) {
            const formatting_entry *entry = &m->list[i];
            if (same_name(entry->name, entry->length, name, length)
                && entry->attributes_length == attributes_length
                && memcmp(entry->attributes, attributes, attributes_length) == 0) {
                same++;
                earliest = i;
            }
        }
        if (same >= 3) { /* Noah's Ark */
            memmove(&m->list[earliest], &m->list[earliest + 1],
                    (size_t) (m->entries - earliest - 1) * sizeof(formatting_entry));
            m->entries--;
        }
    }
    if (grow((void **) &m->list, &m->list_capacity, m->entries, sizeof(formatting_entry)) < 0) {
        return -1;
    }
    formatting_entry *entry = &m->list[m->entries++];
    entry->name = name;
    entry->length = length;
    entry->attributes = attributes;
    entry->attributes_length = attributes_length;
    return 0;
}

static int
push_open(model *m, const unsigned char *name, size_t length, unsigned flags)
{
    if (grow((void **) &m->open, &m->capacity, m->depth, sizeof(open_element)) < 0) {
        return -1;
    }
    m->open[m->depth].name = name;
    m->open[m->depth].length = length;
    m->open[m->depth].flags = flags;
    m->depth++;
    return 0;
}

/* The adoption agency, as far as the stack goes: the steps taken; *past: the element it ends
 * opened past the depth (the parser is not given it). */
static Py_ssize_t
formatting_end(model *m, const unsigned char *name, size_t length, bool *past)
{
    Py_ssize_t depth = m->depth, position = depth - 1;
    bool special_above = false;
    for (; position >= 0; position--) {
        const open_element *open = &m->open[position];
        if (same_name(open->name, open->length, name, length)) {
            if (open->flags & PAST_DEPTH) {
                pop_from(m, position);
                *past = true;
                return depth - position;
            }
            if (!special_above) {
                pop_from(m, position);
                forget(m, name, length);
            }
            return depth - position;
        }
        if (open->flags & IS_SCOPE) {
            break;
        }
        special_above = special_above || ((open->flags & IS_SPECIAL) && !(open->flags & PAST_DEPTH));
    }
    /* In the list only, it leaves the list; the search is counted, as the stack may be long past
     * the depth. */
    Py_ssize_t scanned = 0;
    bool open_anywhere = false;
    for (Py_ssize_t i = 0; i < depth && !open_anywhere; i++) {
        scanned++;
        open_anywhere = same_name(m->open[i].name, m->open[i].length, name, length)
                        && !(m->open[i].flags & PAST_DEPTH);
    }
    if (!open_anywhere) {
        forget(m, name, length);
    }
    return depth - position + scanned;
}

/* An end tag, as far as the stack goes: the steps taken; *past as formatting_end's. */
static Py_ssize_t
end_tag(model *m, const unsigned char *name, size_t length, unsigned flags, bool *past)
{
    *past = false;
    if ((length == 4 && ascii_ieq(name, "body", 4)) || (length == 4 && ascii_ieq(name, "html", 4))
        || (length == 2 && ascii_ieq(name, "br", 2))) {
        return 1;
    }
    if (flags & IS_FORMATTING) {
        return formatting_end(m, name, length, past);
    }
    unsigned stop = (flags & IS_SPECIAL) ? IS_SCOPE : IS_SPECIAL;
    if (flags & IS_TABLE_PART) {
        stop = IS_TABLE_BOUNDARY;
    }
    else if (length == 2 && ascii_ieq(name, "li", 2)) {
        stop = IS_SCOPE | IS_LIST;
    }
    else if (length == 1 && ascii_ieq(name, "p", 1)) {
        stop = IS_SCOPE | M_BUTTON;
    }
    Py_ssize_t depth = m->depth, position = depth - 1;
    for (; position >= 0; position--) {
        const open_element *open = &m->open[position];
        if (same_name(open->name, open->length, name, length)) {
            *past = (open->flags & PAST_DEPTH) != 0;
            if (length == 4 && ascii_ieq(name, "form", 4)) {
                m->real -= !*past;
                memmove(&m->open[position], &m->open[position + 1],
                        (size_t) (m->depth - position - 1) * sizeof(open_element));
                m->depth--;
            }
            else {
                pop_from(m, position);
            }
            return depth - position;
        }
        if (open->flags & stop) {
            break;
        }
    }
    return depth - position;
}

static void
closes_group(model *m, unsigned closes, unsigned stops)
{
    Py_ssize_t depth = m->depth, lowest = -1;
    Py_ssize_t bottom = depth - WINDOW > 0 ? depth - WINDOW : 0;
    for (Py_ssize_t position = depth - 1; position >= bottom; position--) {
        unsigned open_flags = m->open[position].flags;
        if (open_flags & closes) {
            lowest = position;
        }
        else if (open_flags & stops) {
            break;
        }
        if (stops & STOP_ALL) {
            break;
        }
    }
    if (lowest >= 0) {
        open_element closed = m->open[lowest];
        pop_from(m, lowest);
        if ((closed.flags & IS_FORMATTING) && !(closed.flags & PAST_DEPTH)) {
            forget(m, closed.name, closed.length);
        }
    }
}

/* The page as the parser reads it, when what lies past the depth is flattened (data NULL:
 * nothing is). */
typedef struct {
    unsigned char *data;
    Py_ssize_t used;
    Py_ssize_t capacity;
} flat_source;

static int
flat_append(flat_source *flat, const unsigned char *from, Py_ssize_t length)
{
    if (flat->used + length > flat->capacity) {
        Py_ssize_t capacity = flat->capacity ? flat->capacity : 4096;
        while (capacity < flat->used + length) {
            capacity *= 2;
        }
        unsigned char *grown = PyMem_Realloc(flat->data, (size_t) capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        flat->data = grown;
        flat->capacity = capacity;
    }
    memcpy(flat->data + flat->used, from, (size_t) length);
    flat->used += length;
    return 0;
}

/* The source up to `to`, from where it was last copied, then `extra`. */
static int
flat_copy(flat_source *flat, const unsigned char **copied, const unsigned char *to,
          const char *extra, const unsigned char *resume)
{
    if (flat_append(flat, *copied, to - *copied) < 0
        || flat_append(flat, (const unsigned char *) extra, (Py_ssize_t) strlen(extra)) < 0) {
        return -1;
    }
    *copied = resume;
    return 0;
}

/* (offset, limit), as python_prescan, and the flattened page in `flat`; -1 with an exception
 * set on failure. */
static int
prescan_source(const unsigned char *source, Py_ssize_t size, Py_ssize_t max_depth,
               long long max_work, Py_ssize_t max_markers, Py_ssize_t *offset, flat_source *flat)
{
    const unsigned char *end = source + size, *at = source, *text_from = source;
    const unsigned char *copied = source; /* the flattened page so far reaches this far */
    model m = {0};
    long long work = 0;
    Py_ssize_t markers = 0;
    int limit = LIMIT_NONE;
    *offset = -1;
#define CUT(why)                                                                                   \
    do {                                                                                           \
        *offset = at - source;                                                                     \
        limit = (why);                                                                             \
        goto done;                                                                                 \
    } while (0)
    while ((at = find_byte(at, end, '<')) != NULL && end - at >= 2) {
        unsigned char second = at[1];
        if (at > text_from) {
            /* Text: a node, and the parser rebuilds the formatting elements that are not open. */
            work += ELEMENT_COST + (long long) model_active(&m) * (ELEMENT_COST + m.real);
        }
        if (second == '!' || second == '?'
            || (second == '/' && !(end - at >= 3 && (at[2] | 0x20) >= 'a' && (at[2] | 0x20) <= 'z'))) {
            /* A comment, a doctype or a bogus comment: a node. */
            work += ELEMENT_COST;
            if (work > max_work) {
                CUT(LIMIT_WORK);
            }
        }
        if (end - at >= 4 && second == '!' && at[2] == '-' && at[3] == '-') {
            if (marker_comment(at + 4, end) && ++markers > max_markers) {
                CUT(LIMIT_MARKERS);
            }
            const unsigned char *close = find_comment_end(at + 4, end);
            if (close == NULL) {
                goto done;
            }
            at = text_from = close + 3;
            continue;
        }
        if (second == '!' || second == '?') {
            const unsigned char *close = find_byte(at + 2, end, '>');
            if (close == NULL) {
                goto done;
            }
            at = text_from = close + 1;
            continue;
        }
        bool closing = second == '/';
        const unsigned char *start = at + 1 + closing;
        if (start >= end || !((*start | 0x20) >= 'a' && (*start | 0x20) <= 'z')) {
            if (closing) {
                const unsigned char *close = find_byte(start, end, '>');
                if (close == NULL) {
                    goto done;
                }
                at = text_from = close + 1;
            }
            else {
                at++;
            }
            continue;
        }
        const unsigned char *k = start;
        while (k < end && !html_space(*k) && *k != '/' && *k != '>') k++;
        const unsigned char *name = start, *name_end = k;
        size_t length = (size_t) (k - start);
        long long attributes = 0, tag_work = 0;
        bool slash = false;
        for (;;) {
            while (k < end && (html_space(*k) || *k == '/')) {
                slash = *k == '/';
                k++;
            }
            if (k >= end) {
                goto done; /* a tag the end of the page cuts: the parser drops it */
            }
            if (*k == '>') {
                break;
            }
            slash = false;
            tag_work += ELEMENT_COST; /* an allocation, on an end tag too (lexbor keeps them) */
            if (!closing) {
                tag_work += attributes;
                attributes++;
            }
            k++;
            while (k < end && !html_space(*k) && *k != '/' && *k != '>' && *k != '=') k++;
            while (k < end && html_space(*k)) k++;
            if (k < end && *k == '=') {
                k++;
                while (k < end && html_space(*k)) k++;
                if (k < end && (*k == '"' || *k == '\'')) {
                    const unsigned char *close = find_byte(k + 1, end, *k);
                    if (close == NULL) {
                        goto done;
                    }
                    k = close + 1;
                }
                else {
                    while (k < end && !html_space(*k) && *k != '>') k++;
                }
            }
        }
        const unsigned char *after = k + 1;
        text_from = after;
        const tag_class *known = class_of(name, length);
        unsigned flags = known != NULL ? known->flags : 0;
        if (closing) {
            bool past = false;
            work += end_tag(&m, name, length, flags, &past);
            if (past && !(flags & IS_NOINDEX)) {
                /* The end of an element the parser was never given: gone too. */
                if (flat_copy(flat, &copied, at, " ", after) < 0) {
                    limit = -1;
                    goto done;
                }
            }
            else {
                work += tag_work;
            }
            if ((flags & IS_NOINDEX) && ++markers > max_markers) {
                CUT(LIMIT_MARKERS);
            }
        }
        else {
            long long real = m.real, active = model_active(&m);
            /* Counted before the tag closes what it implies, as the parser's checks walk. */
            long long start_work = ELEMENT_COST + real + active * (ELEMENT_COST + real) + tag_work;
            if ((flags & IS_NOINDEX) && ++markers > max_markers) {
                CUT(LIMIT_MARKERS);
            }
            if (flags & IS_PLAINTEXT) {
                goto done; /* the rest of the page is its text */
            }
            if (known != NULL && known->closes != 0) {
                closes_group(&m, known->closes, known->stops);
            }
            if (flags & IS_RAW_TEXT) {
                work += start_work;
                if (work > max_work) {
                    CUT(LIMIT_WORK);
                }
                const unsigned char *close = find_raw_text_end(after, end, name, length);
                if (close == NULL) {
                    goto done;
                }
                at = text_from = close;
                continue;
            }
            /* A self-closing tag closes itself in SVG and MathML only: an element is foreign
             * when it is <svg> or <math>, or its parent is foreign and no integration point and
             * it is no tag that breaks out to HTML (where `/>` closes nothing). */
            bool foreign = (flags & IS_FOREIGN) != 0;
            if (!foreign && m.depth > 0) {
                const open_element *parent = &m.open[m.depth - 1];
                foreign = (parent->flags & IN_FOREIGN) != 0
                          && !name_listed(INTEGRATION_POINTS, parent->name, parent->length)
                          && !name_listed(BREAKOUT_TAGS, name, length);
            }
            slash = slash && foreign;
            if (foreign) {
                flags |= IN_FOREIGN;
            }
            if (flags & IS_VOID) {
                work += start_work;
            }
            else if (m.real >= max_depth && !(flags & IS_NOINDEX)) {
                /* Past the depth: the parser is not given the element, only what it holds; an
                 * <a> is given closed at once, for its link (as a browser's tree holds it). */
                bool anchor = length == 1 && (*name | 0x20) == 'a';
                if (anchor) {
                    work += start_work;
                }
                else {
                    work += 1 + active; /* the model's own steps */
                }
                if ((anchor ? flat_copy(flat, &copied, after, "</a>", after)
                            : flat_copy(flat, &copied, at, " ", after))
                    < 0) {
                    limit = -1;
                    goto done;
                }
                if (!slash) {
                    if (push_open(&m, name, length, flags | PAST_DEPTH) < 0) {
                        limit = -1;
                        goto done;
                    }
                }
            }
            else {
                work += start_work;
                if (!slash) {
                    if (push_open(&m, name, length, flags) < 0) {
                        limit = -1;
                        goto done;
                    }
                    m.real++;
                    if (((flags & IS_MARKER) && add_formatting(&m, NULL, 0, NULL, 0) < 0)
                        || ((flags & IS_FORMATTING)
                            && add_formatting(&m, name, length, name_end, (size_t) (k - name_end))
                                   < 0)) {
                        limit = -1;
                        goto done;
                    }
                    if (model_active(&m) > max_depth) {
                        CUT(LIMIT_DEPTH);
                    }
                }
            }
        }
        if (work > max_work) {
            CUT(LIMIT_WORK);
        }
        at = after;
    }
#undef CUT
done:
    if (limit >= 0 && flat->data != NULL) {
        /* Up to the cut; a tag past the depth that crossed the work bound is in already. */
        const unsigned char *last = *offset >= 0 ? source + *offset : end;
        if (flat_append(flat, copied, last > copied ? last - copied : 0) < 0) {
            limit = -1;
        }
    }
    PyMem_Free(m.open);
    PyMem_Free(m.list);
    return limit;
}

static PyObject *
prescan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t max_depth, max_markers, offset;
    long long max_work;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "prescan(source, max_depth, max_work, max_markers)");
        return NULL;
    }
    max_depth = PyLong_AsSsize_t(args[1]);
    max_work = PyLong_AsLongLong(args[2]);
    max_markers = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred() || PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    flat_source flat = {0};
    int limit = prescan_source((const unsigned char *) view.buf, view.len, max_depth, max_work,
                               max_markers, &offset, &flat);
    PyBuffer_Release(&view);
    PyObject *result = NULL;
    if (limit >= 0) {
        result = flat.data == NULL
                     ? Py_BuildValue("(niO)", offset, limit, Py_None)
                     : Py_BuildValue("(niy#)", offset, limit, (const char *) flat.data, flat.used);
    }
    PyMem_Free(flat.data);
    return result;
}

/* The main content reading: its own file, on this file's layout and helpers. */
#include "_maincontent.c"
/* Its Markdown's links, on join_href. */
#include "_linkmarks.c"

static PyMethodDef methods[] = {
    {"prescan", (PyCFunction) (void (*)(void)) prescan, METH_FASTCALL,
     "prescan(source, max_depth, max_work, max_markers) -> (offset or -1, limit, flattened or None)"},
    {"links", (PyCFunction) (void (*)(void)) links, METH_FASTCALL,
     "links(anchors, resolve, unusable_error, follow, obey_rel, (origin, directory)) -> "
     "(followed, held_back, unusable)"},
    {"marked_links", (PyCFunction) (void (*)(void)) marked_links, METH_FASTCALL,
     "marked_links(markdown, hrefs, resolve, (origin, directory), page_url) -> the Markdown "
     "with its "
     "links, or None where the Python reading must do it"},
    {"scan", (PyCFunction) (void (*)(void)) scan, METH_FASTCALL,
     "scan(document_address, marker_word, max_anchors) -> (anchors, metas, title, base, lang, text, "
     "nosnippet_text, headings, sections, yandex_element)"},
    {"main_configure", (PyCFunction) (void (*)(void)) main_configure, METH_FASTCALL,
     "main_configure(tag_flags, tag_ids, attr_ids, rules, thresholds)"},
    {"main_parts_linked", (PyCFunction) (void (*)(void)) main_parts_linked, METH_FASTCALL,
     "main_parts_linked(body_address, resolve, (origin, directory), page_url) -> (text, "
     "markdown with its links or None, hrefs, fallback or None, frame, markdown with marked "
     "links or None)"},
    {"main_parts", main_parts, METH_O,
     "main_parts(body_address) -> (text, markdown with marked links, hrefs, fallback or None)"},
    {"attr_name_ids", attr_name_ids, METH_O,
     "attr_name_ids(element_address) -> lexbor's ids of its attributes' names (0: none there)"},
    {"node_fields", node_fields, METH_O,
     "node_fields(address) -> (parent, first_child, last_child, next, prev, type, local_name)"},
    {"element_fields", element_fields, METH_O, "element_fields(address) -> (first_attr, last_attr)"},
    {"attr_fields", attr_fields, METH_O, "attr_fields(address) -> (owner, next, prev)"},
    {"text_length", text_length, METH_O, "text_length(address) -> bytes of a text node's data"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "crawler.page._pagescan",
    .m_doc = "The page step's walk over a selectolax (lexbor) tree, in C; see crawler.page.compiled.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__pagescan(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    /* The lexbor and selectolax releases this layout was copied from, and the tag ids the walk
     * relies on (checked against selectolax's `tag_id` before the walk is trusted). */
    PyObject *tags = Py_BuildValue(
        "{sisisisisisisisisisisisisisisisisisisisisisisisisi}", "a", TAG_A, "area", TAG_AREA, "base",
        TAG_BASE, "body", TAG_BODY, "dfn", TAG_DFN, "dt", TAG_DT, "frame", TAG_FRAME, "h1", TAG_H1, "h2", TAG_H2, "h3", TAG_H3,
        "h4", TAG_H4, "h5", TAG_H5, "h6", TAG_H6, "html", TAG_HTML, "iframe", TAG_IFRAME, "meta",
        TAG_META, "nav", TAG_NAV, "noembed", TAG_NOEMBED, "noframes", TAG_NOFRAMES, "noscript",
        TAG_NOSCRIPT, "script", TAG_SCRIPT, "style", TAG_STYLE, "template", TAG_TEMPLATE, "title",
        TAG_TITLE, "", TAG_LAST_ENTRY);
    if (tags == NULL || PyModule_AddStringConstant(m, "LEXBOR_LAYOUT", "3.1.0") < 0
        || PyModule_AddStringConstant(m, "SELECTOLAX", "1.0.2") < 0
        || PyModule_AddObjectRef(m, "TAG_IDS", tags) < 0) {
        Py_XDECREF(tags);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(tags);
    PyObject *classes = index_tag_classes() == 0 ? PyDict_New() : NULL;
    if (classes == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    for (size_t i = 0; i < TAG_CLASS_COUNT; i++) {
        const tag_class *known = &TAG_CLASSES[i];
        PyObject *row = Py_BuildValue("(III)", known->flags, known->closes, known->stops);
        if (row == NULL || PyDict_SetItemString(classes, known->name, row) < 0) {
            Py_XDECREF(row);
            Py_DECREF(classes);
            Py_DECREF(m);
            return NULL;
        }
        Py_DECREF(row);
    }
    if (PyModule_AddObjectRef(m, "TAG_CLASSES", classes) < 0) {
        Py_DECREF(classes);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(classes);
    return m;
}
