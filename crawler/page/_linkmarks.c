/* crawler.page.link_marks.with_links in C: the main content's Markdown with each marked link's
 * URL put in. Included by _pagescan.c, after join_href, whose short path it shares with the
 * page's links: an href that path cannot join (not plain ASCII, an empty target, dot segments)
 * goes to the Python resolver it is given, as in Python.
 *
 * The Markdown is read as UTF-8 (the marks are ASCII controls) once, left to right, with a
 * stack of the open marks: an image's or a link's text ends at the first TARGET after it,
 * innermost first, as the Python reading's repeated substitutions take them. Anything it was
 * not made for (a mark out of place, a URL holding a mark) returns None, and the Python reading
 * does it. */

enum { LM_LINK_OPEN = 2, LM_TARGET = 3, LM_TARGET_END = 4, LM_IMAGE_OPEN = 5 };

typedef struct {
    char *data;
    Py_ssize_t used, size;
} lm_buffer;

static int
lm_reserve(lm_buffer *buffer, Py_ssize_t more)
{
    if (buffer->used + more <= buffer->size) {
        return 0;
    }
    Py_ssize_t size = buffer->size * 2 > buffer->used + more ? buffer->size * 2
                                                               : buffer->used + more + 256;
    char *data = PyMem_Realloc(buffer->data, (size_t) size);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    buffer->data = data;
    buffer->size = size;
    return 0;
}

static int
lm_append(lm_buffer *buffer, const char *data, Py_ssize_t length)
{
    if (lm_reserve(buffer, length) < 0) {
        return -1;
    }
    memcpy(buffer->data + buffer->used, data, (size_t) length);
    buffer->used += length;
    return 0;
}

/* `text` at `start` wrapped: open + text + middle + destination + ")". */
static int
lm_wrap(lm_buffer *buffer, Py_ssize_t start, const char *open, const char *destination,
        Py_ssize_t destination_length)
{
    Py_ssize_t open_length = (Py_ssize_t) strlen(open);
    if (lm_reserve(buffer, open_length + destination_length + 3) < 0) {
        return -1;
    }
    memmove(buffer->data + start + open_length, buffer->data + start,
            (size_t) (buffer->used - start));
    memcpy(buffer->data + start, open, (size_t) open_length);
    buffer->used += open_length;
    memcpy(buffer->data + buffer->used, "](", 2);
    buffer->used += 2;
    memcpy(buffer->data + buffer->used, destination, (size_t) destination_length);
    buffer->used += destination_length;
    buffer->data[buffer->used++] = ')';
    return 0;
}

/* The URL an href names, or Py_None; a new reference, NULL on error. */
static PyObject *
lm_url(PyObject *href, PyObject *resolve, PyObject *page_url, bool short_path, const char *origin,
       Py_ssize_t origin_length, const char *directory, Py_ssize_t directory_length)
{
    if (!PyUnicode_Check(href)) {
        PyErr_SetString(PyExc_TypeError, "an href is a str");
        return NULL;
    }
    if (page_url != Py_None && PyUnicode_GET_LENGTH(href) > 0 && PyUnicode_READ_CHAR(href, 0) == '#') {
        /* A link within the page, with no <base>: the page's own URL. */
        return PyUnicode_Concat(page_url, href);
    }
    if (short_path) {
        PyObject *joined = join_href(href, origin, origin_length, directory, directory_length);
        if (joined != NULL) {
            /* join_href takes ASCII hrefs only, and leaves the fragment off; a reader's link
             * keeps it. */
            const char *data = (const char *) PyUnicode_1BYTE_DATA(href);
            Py_ssize_t length = PyUnicode_GET_LENGTH(href);
            const char *hash = memchr(data, '#', (size_t) length);
            if (hash == NULL) {
                return joined;
            }
            /* Both ASCII: the URL made in one piece. */
            Py_ssize_t joined_length = PyUnicode_GET_LENGTH(joined);
            Py_ssize_t fragment_length = length - (hash - data);
            PyObject *url = PyUnicode_IS_ASCII(joined)
                                ? PyUnicode_New(joined_length + fragment_length, 127)
                                : NULL;
            if (url != NULL) {
                memcpy(PyUnicode_1BYTE_DATA(url), PyUnicode_1BYTE_DATA(joined),
                       (size_t) joined_length);
                memcpy(PyUnicode_1BYTE_DATA(url) + joined_length, hash, (size_t) fragment_length);
            } else if (!PyErr_Occurred()) {
                PyObject *fragment = PyUnicode_FromStringAndSize(hash, fragment_length);
                url = fragment != NULL ? PyUnicode_Concat(joined, fragment) : NULL;
                Py_XDECREF(fragment);
            }
            Py_DECREF(joined);
            return url;
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    return PyObject_CallOneArg(resolve, href);
}

/* `url` as a Markdown link destination, as link_marks._destination writes it, into `out`;
 * 0 when done, 1 when the URL holds a mark (the Python reading's business), -1 on error. */
static int
lm_destination(PyObject *url, lm_buffer *out)
{
    Py_ssize_t length;
    const char *data = PyUnicode_AsUTF8AndSize(url, &length);
    if (data == NULL) {
        /* A lone surrogate: the Python reading's business. */
        return PyErr_ExceptionMatches(PyExc_UnicodeEncodeError) ? (PyErr_Clear(), 1) : -1;
    }
    bool angle = false;
    for (Py_ssize_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char) data[i];
        if (c >= LM_LINK_OPEN && c <= LM_IMAGE_OPEN) {
            return 1;
        }
        angle |= c == ' ' || c == '(' || c == ')' || c == '<' || c == '>';
    }
    out->used = 0;
    /* At most three bytes for each, and the angle brackets. */
    if (lm_reserve(out, 3 * length + 2) < 0) {
        return -1;
    }
    char *to = out->data;
    if (angle) {
        *to++ = '<';
    }
    for (Py_ssize_t i = 0; i < length; i++) {
        char c = data[i];
        const char *escape = c == '|' ? "%7C" : angle && c == '<' ? "%3C" : angle && c == '>' ? "%3E" : NULL;
        if (escape != NULL) {
            memcpy(to, escape, 3);
            to += 3;
        } else {
            *to++ = c;
        }
    }
    if (angle) {
        *to++ = '>';
    }
    out->used = to - out->data;
    return 0;
}

/* The Markdown `source` (UTF-8, `source_length` bytes) with its links' URLs put in: a new str,
 * Py_None when the Python reading is to do it, NULL on error. The bytes are those the reading
 * made, which may not all be UTF-8 (a page's own): they are decoded at the end, "replace", as
 * they are when the Markdown is a str first; a mark followed by a byte that only continues a
 * character (never in UTF-8) is left to the Python reading of that str, so that no bytes a mark
 * held apart are read as one character. */
static PyObject *
lm_linked(const char *source, Py_ssize_t source_length, PyObject *hrefs, PyObject *resolve,
          PyObject *join_parts, PyObject *page_url)
{
    PyObject *origin_str, *directory_str;
    if (!PyList_Check(hrefs) || !PyArg_ParseTuple(join_parts, "UU", &origin_str, &directory_str)
        || (page_url != Py_None && !PyUnicode_Check(page_url))) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "page_url is a str or None, hrefs a list");
        }
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(hrefs);
    const char *origin = NULL, *directory = NULL;
    Py_ssize_t origin_length = 0, directory_length = 0;
    bool short_path = short_path_of(origin_str, directory_str, &origin, &origin_length, &directory,
                                    &directory_length);
    PyObject **urls = PyMem_Calloc((size_t) (count ? count : 1), sizeof(PyObject *));
    /* Each mark has an href of its own: no more can be open. */
    Py_ssize_t *open = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t) (count ? count : 1));
    lm_buffer out = {0}, destination = {0};
    PyObject *result = NULL;
    Py_ssize_t depth = 0;
    if (urls == NULL || open == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        urls[i] = lm_url(PyList_GET_ITEM(hrefs, i), resolve, page_url, short_path, origin, origin_length,
                         directory, directory_length);
        if (urls[i] == NULL) {
            goto done;
        }
        if (urls[i] != Py_None && !PyUnicode_Check(urls[i])) {
            PyErr_SetString(PyExc_TypeError, "resolve gives a str or None");
            goto done;
        }
    }
    if (lm_reserve(&out, source_length + source_length / 2 + 64) < 0) {
        goto done;
    }
    for (Py_ssize_t at = 0; at < source_length; at++) {
        unsigned char c = (unsigned char) source[at];
        if ((unsigned char) (c - LM_LINK_OPEN) <= 3 && at + 1 < source_length
            && ((unsigned char) source[at + 1] & 0xc0) == 0x80) {
            goto python; /* a mark, then half a character */
        }
        if (c == LM_LINK_OPEN || c == LM_IMAGE_OPEN) {
            if (depth == count) {
                goto python;
            }
            /* Where the text starts, and which mark opened it (in the low bit). */
            open[depth++] = out.used * 2 + (c == LM_IMAGE_OPEN);
            continue;
        }
        if (c == LM_TARGET_END) {
            goto python;
        }
        if (c != LM_TARGET) {
            /* The run of text up to the next mark, in one copy. */
            Py_ssize_t end = at + 1;
#ifdef __SSE2__
            /* 16 bytes at a time: a mark is a byte from 2 to 5, one that less 2 is at most 3. */
            const __m128i two = _mm_set1_epi8(LM_LINK_OPEN), three = _mm_set1_epi8(3);
            for (; end + 16 <= source_length; end += 16) {
                __m128i less = _mm_sub_epi8(
                    _mm_loadu_si128((const __m128i *) (source + end)), two);
                unsigned marks = (unsigned) _mm_movemask_epi8(
                    _mm_cmpeq_epi8(_mm_min_epu8(less, three), less));
                if (marks != 0) {
                    end += __builtin_ctz(marks);
                    break;
                }
            }
#endif
            while (end < source_length && (unsigned char) (source[end] - LM_LINK_OPEN) > 3) {
                end++;
            }
            if (lm_append(&out, (const char *) source + at, end - at) < 0) {
                goto done;
            }
            at = end - 1;
            continue;
        }
        Py_ssize_t index = 0, digits = 0;
        for (at++; at < source_length && source[at] >= '0' && source[at] <= '9'; at++, digits++) {
            index = index * 10 + (source[at] - '0');
            if (index >= count) {
                goto python;
            }
        }
        if (digits == 0 || at >= source_length || source[at] != LM_TARGET_END || depth == 0
            || (at + 1 < source_length && ((unsigned char) source[at + 1] & 0xc0) == 0x80)) {
            goto python;
        }
        Py_ssize_t start = open[--depth] / 2;
        bool image = open[depth] % 2;
        PyObject *url = urls[index];
        if (url == Py_None) {
            if (image) {
                out.used = start; /* an image with no usable URL goes */
            }
            continue;
        }
        if (!image && PyUnicode_IS_ASCII(url) && PyUnicode_GET_LENGTH(url) >= 11
            && memcmp(PyUnicode_1BYTE_DATA(url), "javascript:", 11) == 0) {
            continue;
        }
        int status = lm_destination(url, &destination);
        if (status != 0) {
            if (status > 0) {
                goto python;
            }
            goto done;
        }
        if (lm_wrap(&out, start, image ? "![" : "[", destination.data, destination.used) < 0) {
            goto done;
        }
    }
    if (depth != 0) {
        goto python;
    }
    result = PyUnicode_DecodeUTF8(out.data, out.used, "replace");
    goto done;
python:
    result = Py_NewRef(Py_None);
done:
    if (urls != NULL) {
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_XDECREF(urls[i]);
        }
    }
    PyMem_Free(urls);
    PyMem_Free(open);
    PyMem_Free(out.data);
    PyMem_Free(destination.data);
    return result;
}

static PyObject *
marked_links(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "marked_links(markdown, hrefs, resolve, (origin, directory), page_url)");
        return NULL;
    }
    PyObject *markdown = args[0], *hrefs = args[1];
    if (!PyUnicode_Check(markdown) || !PyList_Check(hrefs)) {
        PyErr_SetString(PyExc_TypeError, "markdown is a str, hrefs a list");
        return NULL;
    }
    if (PyList_GET_SIZE(hrefs) == 0) {
        return Py_NewRef(markdown);
    }
    Py_ssize_t source_length;
    const char *source = PyUnicode_AsUTF8AndSize(markdown, &source_length);
    if (source == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            return NULL;
        }
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return lm_linked(source, source_length, hrefs, args[2], args[3], args[4]);
}


/* main_parts(body_address) and marked_links(...) in one: the Markdown's links put in while it
 * is still the reading's bytes, not decoded into a str and encoded again (about 40 us of a
 * Python documentation page's 17 KB). (text, Markdown with its links or None, hrefs, fallback
 * or None, frame, the Markdown with its marks when the links are the Python reading's, else
 * None). */
static PyObject *
main_parts_linked(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "main_parts_linked(body_address, resolve, (origin, directory), page_url)");
        return NULL;
    }
    mc_output out;
    PyObject *text = NULL, *linked = NULL, *marked = NULL, *frame = NULL, *hrefs = NULL;
    PyObject *result = NULL;
    if (mc_run(args[0], &out) < 0) {
        goto done;
    }
    text = mc_str(out.text.data, out.text.length);
    frame = mc_str(out.frame.data, out.frame.length);
    hrefs = mc_hrefs(&out);
    if (text == NULL || frame == NULL || hrefs == NULL) {
        goto done;
    }
    linked = out.href_count == 0 ? mc_str(out.markdown.data, out.markdown.length)
                                 : lm_linked(out.markdown.data, (Py_ssize_t) out.markdown.length,
                                             hrefs, args[1], args[2], args[3]);
    if (linked == NULL) {
        goto done;
    }
    marked = linked == Py_None ? mc_str(out.markdown.data, out.markdown.length) : Py_NewRef(Py_None);
    if (marked == NULL) {
        goto done;
    }
    result = Py_BuildValue("(OOOsOO)", text, linked, hrefs, out.fallback, frame, marked);
done:
    Py_XDECREF(text);
    Py_XDECREF(linked);
    Py_XDECREF(marked);
    Py_XDECREF(frame);
    Py_XDECREF(hrefs);
    mc_output_free(&out);
    return result;
}
