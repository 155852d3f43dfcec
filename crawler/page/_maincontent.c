/* The main content of a page, in C: the compiled twin of crawler.page.main_content (choosing)
 * and crawler.page.markdown (reading as plain text and Markdown), which are the reference and
 * say what is done and why. Included by _pagescan.c, whose lexbor layout and helpers it uses; it
 * reads lexbor's nodes in place and calls no lexbor function. crawler.page.compiled checks it
 * against the Python reading before trusting it.
 *
 * What it takes from Python, once (`main_configure`): the flags of each tag id lexbor's fixed
 * table has (which tags are skipped, blocks, the frame, ...; read from selectolax's own tag ids),
 * the ids of the few tags and attributes it tests one by one, and the word rules of
 * crawler.page.content_names. So the sets and the words live in Python alone.
 *
 * Text is read as bytes of UTF-8: a character is a byte that is not a continuation byte, and the
 * whitespace folded, stripped and not counted is HTML's (space, tab, LF, CR, FF), as the Python
 * reading counts and folds str.
 */

/* --- configuration ---------------------------------------------------------------------------- */

enum {
    MC_SKIPPED = 1 << 0,
    MC_BLOCK = 1 << 1,
    MC_FRAME = 1 << 2,
    MC_NEVER_NAMED = 1 << 3,
    MC_TEXT_BLOCK = 1 << 4,
    MC_OWN_TEXT_BLOCK = 1 << 5,
    MC_LINK_LIST = 1 << 6,
    MC_LIST = 1 << 7,
    MC_CELL = 1 << 8,
    MC_ROW_GROUP = 1 << 9,
    MC_CELL_BLOCK = 1 << 10,
    MC_CODE = 1 << 11,
    MC_STRONG = 1 << 12,
    MC_EM = 1 << 13,
    MC_HEADING_SHIFT = 16, /* bits 16-18: the heading's level, 0 for none */
};

enum {
    MC_A, MC_IMG, MC_ARTICLE, MC_H1, MC_OL, MC_LI, MC_PRE, MC_HR, MC_BR, MC_BLOCKQUOTE,
    MC_TABLE, MC_TR, MC_CODE_TAG, MC_TAG_COUNT
};
enum { MC_CLASS, MC_ID, MC_ROLE, MC_ITEMPROP, MC_HREF, MC_SRC, MC_ALT, MC_START, MC_ATTR_COUNT };
static const char *const MC_ATTR_NAMES[MC_ATTR_COUNT] = {"class", "id", "role", "itemprop",
                                                          "href", "src", "alt", "start"};
enum {
    RULE_PARTS, RULE_PREFIXES, RULE_WORDS, RULE_CONTENT, RULE_ARTICLE_BODY, RULE_ROLES_OUT,
    RULE_ROLES_IN, RULE_COUNT
};

typedef struct {
    char **words;
    size_t *lengths;
    size_t count;
    size_t by_first[256]; /* the first word starting with each byte (count: none) */
    size_t *next;         /* the next word starting with the same byte */
} mc_words;

#define MC_THRESHOLDS 18

static struct {
    bool ready;
    uint32_t tag_flags[TAG_LAST_ENTRY];
    uintptr_t tags[MC_TAG_COUNT];
    uintptr_t attrs[MC_ATTR_COUNT];
    mc_words rules[RULE_COUNT];
    /* The thresholds of crawler.page.main_content, in its order. */
    double min_page_chars, min_block_chars, keep_share, climb, sibling_share, sibling_floor,
        article_body_bonus, later_article, mass_share, named_share, lead_share, link_dense,
        names_misled, names_misled_chars, own_text_chars, scrap_chars, deepest, max_links;
} MC;

static uint32_t
mc_flags(uintptr_t tag)
{
    return tag < TAG_LAST_ENTRY ? MC.tag_flags[tag] : 0;
}

static const lxb_attr *
mc_attr(const lxb_node *element, int which)
{
    return find_attr(element, MC.attrs[which], MC_ATTR_NAMES[which]);
}

/* class, id, role and itemprop in one pass over the attributes, each as find_attr finds it
 * (the first of its name). */
enum { MC_NAMES = 4 };

static void
mc_collect(const lxb_node *element, const lxb_attr *found[MC_NAMES])
{
    static const size_t lengths[MC_NAMES] = {5, 2, 4, 8};
    for (int i = 0; i < MC_NAMES; i++) {
        found[i] = NULL;
    }
    for (const lxb_attr *attr = ((const lxb_element *) element)->first_attr; attr != NULL;
         attr = attr->next) {
        uintptr_t qualified = attr->qualified_name != 0 ? attr->qualified_name
                                                        : attr->node.local_name;
        for (int i = 0; i < MC_NAMES; i++) {
            if (found[i] != NULL) {
                continue;
            }
            if (qualified < ATTR_LAST_ENTRY
                    ? (qualified == MC.attrs[i] && MC.attrs[i] != 0)
                    : dynamic_id_is(qualified, ATTR_LAST_ENTRY, MC_ATTR_NAMES[i], lengths[i])) {
                found[i] = attr;
                break;
            }
        }
    }
}

/* --- growing buffers ------------------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t length;
    size_t capacity;
} mc_buffer;

static int
mc_reserve(mc_buffer *buffer, size_t more)
{
    size_t needed = buffer->length + more;
    if (needed <= buffer->capacity) {
        return 0;
    }
    size_t capacity = buffer->capacity ? buffer->capacity : 256;
    while (capacity < needed) {
        capacity *= 2;
    }
    char *grown = realloc(buffer->data, capacity);
    if (grown == NULL) {
        return -1;
    }
    buffer->data = grown;
    buffer->capacity = capacity;
    return 0;
}

static int
mc_add(mc_buffer *buffer, const char *data, size_t length)
{
    if (length == 0) {
        return 0;
    }
    if (mc_reserve(buffer, length) < 0) {
        return -1;
    }
    memcpy(buffer->data + buffer->length, data, length);
    buffer->length += length;
    return 0;
}

static int
mc_adds(mc_buffer *buffer, const char *text)
{
    return mc_add(buffer, text, strlen(text));
}

static int
mc_repeat(mc_buffer *buffer, const char *text, size_t times)
{
    for (size_t i = 0; i < times; i++) {
        if (mc_adds(buffer, text) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Puts `length` bytes at `at`, moving what follows. */
static int
mc_insert(mc_buffer *buffer, size_t at, const char *data, size_t length)
{
    if (length == 0) {
        return 0;
    }
    if (mc_reserve(buffer, length) < 0) {
        return -1;
    }
    memmove(buffer->data + at + length, buffer->data + at, buffer->length - at);
    memcpy(buffer->data + at, data, length);
    buffer->length += length;
    return 0;
}

/* Room in an array of `count` items of `size` bytes for one more. */
static int
mc_grow(void **items, Py_ssize_t *capacity, Py_ssize_t count, size_t size)
{
    if (count < *capacity) {
        return 0;
    }
    Py_ssize_t grown_capacity = *capacity ? 2 * *capacity : 64;
    void *grown = realloc(*items, (size_t) grown_capacity * size);
    if (grown == NULL) {
        return -1;
    }
    *items = grown;
    *capacity = grown_capacity;
    return 0;
}

/* --- memory kept from page to page ------------------------------------------------------------ */

/* Each thread keeps the reading's arrays and buffers from one page to the next, emptied, not
 * freed: grown again from nothing on every page, the element table alone was copied about
 * 200 KB a page by realloc on a Python documentation page. A block over MC_KEEP_BYTES (a huge
 * page's) is freed, and a thread's blocks go when it ends. */
enum {
    MC_KEEP_TABLE, MC_KEEP_FRAMES, MC_KEEP_SCRATCH, MC_KEEP_TEXT, MC_KEEP_MARKDOWN, MC_KEEP_FRAME,
    MC_KEEP_READ_TEXT, MC_KEEP_READ_MARKDOWN, MC_KEEP_LINE_ENDS, MC_KEEP_BLOCK_STARTS,
    MC_KEEP_UNITS, MC_KEEP_RUN_TEXT, MC_KEEP_RUN_MARKDOWN, MC_KEEP_SCRATCH1, MC_KEEP_SCRATCH2,
    MC_KEEPS
};
#define MC_KEEP_BYTES ((size_t) 1 << 20)

typedef struct {
    void *data;
    size_t bytes;
} mc_kept_block;

static pthread_key_t mc_kept_key;
static pthread_once_t mc_kept_once = PTHREAD_ONCE_INIT;
static bool mc_kept_ready;

static void
mc_kept_free(void *blocks)
{
    mc_kept_block *kept = blocks;
    for (int i = 0; i < MC_KEEPS; i++) {
        free(kept[i].data);
    }
    free(kept);
}

static void
mc_kept_init(void)
{
    mc_kept_ready = pthread_key_create(&mc_kept_key, mc_kept_free) == 0;
}

/* This thread's kept blocks; NULL when none can be kept (then nothing is). */
static mc_kept_block *
mc_kept_blocks(void)
{
    pthread_once(&mc_kept_once, mc_kept_init);
    if (!mc_kept_ready) {
        return NULL;
    }
    mc_kept_block *kept = pthread_getspecific(mc_kept_key);
    if (kept == NULL && (kept = calloc(MC_KEEPS, sizeof *kept)) != NULL
        && pthread_setspecific(mc_kept_key, kept) != 0) {
        free(kept);
        kept = NULL;
    }
    return kept;
}

/* The block kept in `slot`, and its size in `*bytes`; NULL (0) when there is none. */
static void *
mc_take(int slot, size_t *bytes)
{
    mc_kept_block *kept = mc_kept_blocks();
    *bytes = 0;
    if (kept == NULL || kept[slot].data == NULL) {
        return NULL;
    }
    void *data = kept[slot].data;
    *bytes = kept[slot].bytes;
    kept[slot] = (mc_kept_block) {NULL, 0};
    return data;
}

/* Keeps `data` (`bytes` long) in `slot`, or frees it. */
static void
mc_give(int slot, void *data, size_t bytes)
{
    if (data == NULL) {
        return;
    }
    mc_kept_block *kept = mc_kept_blocks();
    if (kept != NULL && kept[slot].data == NULL && bytes <= MC_KEEP_BYTES) {
        kept[slot] = (mc_kept_block) {data, bytes};
    } else {
        free(data);
    }
}

/* An array of `size`-byte items from `slot`: its items and its capacity in items. */
static void *
mc_take_items(int slot, size_t size, Py_ssize_t *capacity)
{
    size_t bytes;
    void *items = mc_take(slot, &bytes);
    *capacity = (Py_ssize_t) (bytes / size);
    return items;
}

static mc_buffer
mc_take_buffer(int slot)
{
    size_t bytes;
    char *data = mc_take(slot, &bytes);
    return (mc_buffer) {data, 0, bytes};
}

static void
mc_give_buffer(int slot, mc_buffer *buffer)
{
    mc_give(slot, buffer->data, buffer->capacity);
    *buffer = (mc_buffer) {NULL, 0, 0};
}

/* --- text ------------------------------------------------------------------------------------ */

static bool
mc_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static bool
mc_control(unsigned char c)
{
    return c <= 0x08 || c == 0x0b || (c >= 0x0e && c <= 0x1f);
}

static bool
mc_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Bits set in a 16-bit mask, without POPCNT (not in every x86-64; __builtin_popcount without it
 * is a call into libgcc's table for every 16 bytes of text). */
static inline unsigned
mc_popcount16(unsigned mask)
{
    mask = mask - ((mask >> 1) & 0x5555u);
    mask = (mask & 0x3333u) + ((mask >> 2) & 0x3333u);
    mask = (mask + (mask >> 4)) & 0x0f0fu;
    return (mask + (mask >> 8)) & 0x1fu;
}

#ifdef __SSE2__
/* The bits of the 16 bytes of `v` that count as no character: a UTF-8 continuation byte or
 * HTML whitespace. */
static inline unsigned
mc_uncounted16(__m128i v)
{
    const __m128i top = _mm_set1_epi8((char) 0xc0), continuation = _mm_set1_epi8((char) 0x80);
    __m128i gone = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(v, top), continuation),
                     _mm_cmpeq_epi8(v, _mm_set1_epi8(' '))),
        _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')),
                         _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\f')),
                         _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')))));
    return (unsigned) _mm_movemask_epi8(gone);
}
#endif

/* Characters but HTML whitespace (the text of every element passes here): 16 bytes at a time
 * where the machine has SSE2 (every x86-64 has). */
static long
mc_chars(const unsigned char *data, size_t length)
{
    long chars = 0;
    size_t i = 0;
#ifdef __SSE2__
    for (; i + 16 <= length; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *) (data + i));
        chars += 16 - mc_popcount16(mc_uncounted16(v));
    }
#endif
    for (; i < length; i++) {
        unsigned char c = data[i];
        chars += (c & 0xc0) != 0x80 && !mc_space(c);
    }
    return chars;
}

static long
mc_commas(const unsigned char *data, size_t length)
{
    long commas = 0;
    unsigned char wide = 0;
    for (size_t i = 0; i < length; i++) {
        commas += data[i] == ',';
        wide |= data[i] >= 0xe3;
    }
    if (!wide) {
        return commas; /* no byte that starts U+3001 or U+FF0C: ASCII commas only */
    }
    commas = 0;
    for (size_t i = 0; i < length; i++) {
        if (data[i] == ',') {
            commas++;
        } else if (i + 2 < length && data[i] == 0xef && data[i + 1] == 0xbc && data[i + 2] == 0x8c) {
            commas++; /* U+FF0C */
        } else if (i + 2 < length && data[i] == 0xe3 && data[i + 1] == 0x80 && data[i + 2] == 0x81) {
            commas++; /* U+3001 */
        }
    }
    return commas;
}

/* mc_chars and mc_commas in one pass over a text (the walk reads every text of the body). */
static long
mc_chars_commas(const unsigned char *data, size_t length, long *commas)
{
    long chars = 0, ascii_commas = 0;
    size_t i = 0;
    bool wide = false;
#ifdef __SSE2__
    const __m128i comma = _mm_set1_epi8(',');
    const __m128i below_wide = _mm_set1_epi8((char) 0xe2);
    __m128i any_wide = _mm_setzero_si128();
    for (; i + 16 <= length; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *) (data + i));
        chars += 16 - mc_popcount16(mc_uncounted16(v));
        ascii_commas += mc_popcount16((unsigned) _mm_movemask_epi8(_mm_cmpeq_epi8(v, comma)));
        /* A byte from 0xe3 up: max(v, 0xe2) is not 0xe2. */
        any_wide = _mm_or_si128(any_wide, _mm_xor_si128(_mm_max_epu8(v, below_wide), below_wide));
    }
    wide = _mm_movemask_epi8(_mm_cmpeq_epi8(any_wide, _mm_setzero_si128())) != 0xffff;
#endif
    for (; i < length; i++) {
        unsigned char c = data[i];
        chars += (c & 0xc0) != 0x80 && !mc_space(c);
        ascii_commas += c == ',';
        wide |= c >= 0xe3;
    }
    /* U+3001 and U+FF0C are rare: counted again with them only where a byte may start one. */
    *commas = wide ? mc_commas(data, length) : ascii_commas;
    return chars;
}

/* Folds `length` bytes into `out` at `*at`, without branches on the text: each byte is
 * written, and the write kept unless it is a space after a space (or at the start). */
static inline void
mc_fold_bytes(char *out, size_t *at, bool *after_space, const char *data, size_t length)
{
    size_t to = *at;
    bool after = *after_space;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char) data[i];
        bool is_space = mc_space(c);
        out[to] = is_space ? ' ' : (char) c;
        to += !(is_space & after);
        after = is_space;
    }
    *at = to;
    *after_space = after;
}

/* Appends `data` folded: runs of HTML whitespace as one space, none at either end of `buffer`
 * from `start` (the caller strips the end). */
static int
mc_add_folded(mc_buffer *buffer, size_t start, const char *data, size_t length)
{
    if (mc_reserve(buffer, length) < 0) {
        return -1;
    }
    char *out = buffer->data;
    size_t at = buffer->length;
    bool after_space = at == start || out[at - 1] == ' ';
    size_t i = 0;
#ifdef __SSE2__
    /* Prose first, 16 bytes at a time: a block whose whitespace characters stand alone (none
     * after another, nor after a space) is copied with each of them a space. */
    const __m128i space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');
    const __m128i newline = _mm_set1_epi8('\n'), feed = _mm_set1_epi8('\f');
    const __m128i carriage = _mm_set1_epi8('\r');
    for (; i + 16 <= length; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *) (data + i));
        __m128i white = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, tab)),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, newline), _mm_cmpeq_epi8(v, feed)),
                         _mm_cmpeq_epi8(v, carriage)));
        unsigned spaces = (unsigned) _mm_movemask_epi8(white);
        if ((spaces & (spaces >> 1)) != 0 || (after_space && (spaces & 1))) {
            mc_fold_bytes(out, &at, &after_space, data + i, 16); /* this block byte by byte */
            continue;
        }
        v = _mm_or_si128(_mm_and_si128(white, space), _mm_andnot_si128(white, v));
        _mm_storeu_si128((__m128i *) (out + at), v);
        at += 16;
        after_space = (spaces >> 15) & 1;
    }
#endif
    mc_fold_bytes(out, &at, &after_space, data + i, length - i);
    buffer->length = at;
    return 0;
}

static void
mc_strip_end(mc_buffer *buffer, size_t start)
{
    while (buffer->length > start && mc_space((unsigned char) buffer->data[buffer->length - 1])) {
        buffer->length--;
    }
}

/* A text node's data without C0 controls (the reading's link marks are controls). */
static int
mc_add_clean(mc_buffer *buffer, const unsigned char *data, size_t length)
{
    if (mc_reserve(buffer, length) < 0) {
        return -1;
    }
    size_t i = 0;
#ifdef __SSE2__
    /* 16 bytes at a time while none is a control: C0 controls are rare in a page's text. */
    const __m128i below = _mm_set1_epi8(0x20), tab = _mm_set1_epi8('\t');
    const __m128i newline = _mm_set1_epi8('\n'), feed = _mm_set1_epi8('\f');
    const __m128i carriage = _mm_set1_epi8('\r');
    for (; i + 16 <= length; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *) (data + i));
        /* Bytes below 0x20 (as unsigned: the top bit clear and below 0x20 signed) but the
         * four kept: tab, newline, form feed, carriage return. */
        __m128i low = _mm_andnot_si128(_mm_cmplt_epi8(v, _mm_setzero_si128()),
                                       _mm_cmplt_epi8(v, below));
        __m128i kept = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, newline)),
                                    _mm_or_si128(_mm_cmpeq_epi8(v, feed), _mm_cmpeq_epi8(v, carriage)));
        if (_mm_movemask_epi8(_mm_andnot_si128(kept, low)) != 0) {
            break;
        }
        memcpy(buffer->data + buffer->length, data + i, 16);
        buffer->length += 16;
    }
#endif
    for (; i < length; i++) {
        if (!mc_control(data[i])) {
            buffer->data[buffer->length++] = (char) data[i];
        }
    }
    return 0;
}

/* Bytes `from` to `to` of `data` (`length` long) escaped into `buffer`, which has room (see
 * mc_add_escaped). */
static inline void
mc_escape_bytes(mc_buffer *buffer, const unsigned char *data, size_t length, size_t from,
                size_t to)
{
    for (size_t i = from; i < to; i++) {
        unsigned char c = data[i];
        if (mc_control(c)) {
            continue;
        }
        bool escape = c == '\\' || c == '`' || c == '*' || c == '[' || c == ']';
        if (c == '_') {
            size_t before = i, after = i + 1;
            while (before > 0 && mc_control(data[before - 1])) {
                before--;
            }
            while (after < length && mc_control(data[after])) {
                after++;
            }
            escape = before == 0 || !mc_alnum(data[before - 1]) || after == length
                     || !mc_alnum(data[after]);
        }
        if (escape) {
            buffer->data[buffer->length++] = '\\';
        }
        buffer->data[buffer->length++] = (char) c;
    }
}

/* The same, escaped for Markdown: \ ` * [ ] always, _ where no ASCII letter or digit of the
 * same text is on one of its sides. */
static int
mc_add_escaped(mc_buffer *buffer, const unsigned char *data, size_t length)
{
    if (mc_reserve(buffer, 2 * length) < 0) {
        return -1;
    }
    size_t i = 0;
#ifdef __SSE2__
    /* Blocks of 16 bytes with no control and nothing to escape (most text) copied as they are;
     * from the first block with one, byte by byte. */
    const __m128i below_space = _mm_set1_epi8(0x20 - 0x80), flip = _mm_set1_epi8((char) 0x80);
    const __m128i backslash = _mm_set1_epi8('\\'), tick = _mm_set1_epi8('`');
    const __m128i star = _mm_set1_epi8('*'), open = _mm_set1_epi8('['), close = _mm_set1_epi8(']');
    const __m128i underscore = _mm_set1_epi8('_'), tab = _mm_set1_epi8('\t');
    const __m128i newline = _mm_set1_epi8('\n'), feed = _mm_set1_epi8('\f');
    const __m128i carriage = _mm_set1_epi8('\r');
    for (; i + 16 <= length; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *) (data + i));
        /* Controls: bytes below 0x20, compared signed after the flip, but the whitespace among
         * them (prose wrapped in the page's source has newlines), which is copied as it is. */
        __m128i white = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, newline)),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, feed), _mm_cmpeq_epi8(v, carriage)));
        __m128i low = _mm_andnot_si128(white, _mm_cmplt_epi8(_mm_xor_si128(v, flip), below_space));
        __m128i marks = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, backslash), _mm_cmpeq_epi8(v, tick)),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, star), _mm_cmpeq_epi8(v, open)),
                         _mm_or_si128(_mm_cmpeq_epi8(v, close), _mm_cmpeq_epi8(v, underscore))));
        if (_mm_movemask_epi8(_mm_or_si128(low, marks)) != 0) {
            mc_escape_bytes(buffer, data, length, i, i + 16); /* this block byte by byte */
            continue;
        }
        _mm_storeu_si128((__m128i *) (buffer->data + buffer->length), v);
        buffer->length += 16;
    }
#endif
    mc_escape_bytes(buffer, data, length, i, length);
    return 0;
}

static void
mc_text_of(const lxb_node *node, const unsigned char **data, size_t *length)
{
    const lxb_character_data *text = (const lxb_character_data *) node;
    *data = text->data.data != NULL ? text->data.data : (const unsigned char *) "";
    *length = text->data.data != NULL ? text->data.length : 0;
}

/* --- what an element's names say (crawler.page.content_names) -------------------------------- */

enum { NAMED_BOILERPLATE = 1, NAMED_CONTENT = 2, NAMED_ARTICLE_BODY = 4 };

static bool
mc_any_part(const mc_words *words, size_t from, const unsigned char *text, size_t length)
{
    /* At each position, only the words that start with its byte (most bytes start none). */
    for (size_t at = 0; at < length; at++) {
        for (size_t i = words->by_first[text[at]]; i < words->count; i = words->next[i]) {
            if (i >= from && words->lengths[i] <= length - at
                && memcmp(text + at, words->words[i], words->lengths[i]) == 0) {
                return true;
            }
        }
    }
    return false;
}

static bool
mc_equals_any(const mc_words *words, const unsigned char *text, size_t length)
{
    for (size_t i = 0; i < words->count; i++) {
        if (words->lengths[i] == length && memcmp(text, words->words[i], length) == 0) {
            return true;
        }
    }
    return false;
}

/* An attribute's value stripped of HTML whitespace and ASCII-lowered into `out`. */
static size_t
mc_lowered(const lxb_attr *attr, unsigned char *out, size_t size)
{
    const unsigned char *data = attr->value->data;
    size_t length = attr->value->length;
    while (length > 0 && mc_space(data[0])) {
        data++;
        length--;
    }
    while (length > 0 && mc_space(data[length - 1])) {
        length--;
    }
    if (length > size) {
        return size + 1; /* longer than any word compared with */
    }
    for (size_t i = 0; i < length; i++) {
        unsigned char c = data[i];
        out[i] = (c >= 'A' && c <= 'Z') ? c + 32 : c;
    }
    return length;
}

static bool
mc_boilerplate_words(const unsigned char *names, size_t length)
{
    const mc_words *parts = &MC.rules[RULE_PARTS];
    /* The first part is `comment`: not as in `commentary`. */
    const char *comment = parts->count ? parts->words[0] : "";
    size_t comment_length = parts->count ? parts->lengths[0] : 0;
    for (size_t i = 0; comment_length && i + comment_length <= length; i++) {
        if (memcmp(names + i, comment, comment_length) == 0
            && !(i + comment_length + 3 <= length
                 && memcmp(names + i + comment_length, "ary", 3) == 0)) {
            return true;
        }
    }
    if (mc_any_part(parts, 1, names, length)) {
        return true;
    }
    size_t start = 0;
    for (size_t i = 0; i <= length; i++) {
        if (i < length && !mc_space(names[i]) && names[i] != '-' && names[i] != '_') {
            continue;
        }
        const unsigned char *word = names + start;
        size_t word_length = i - start;
        if (mc_equals_any(&MC.rules[RULE_WORDS], word, word_length)) {
            return true;
        }
        const mc_words *prefixes = &MC.rules[RULE_PREFIXES];
        for (size_t p = 0; p < prefixes->count; p++) {
            if (prefixes->lengths[p] <= word_length
                && memcmp(word, prefixes->words[p], prefixes->lengths[p]) == 0) {
                return true;
            }
        }
        start = i + 1;
    }
    return false;
}

/* What the class and id say: most elements of a page share a few class values, so each
 * different pair is read once per page. */
typedef struct {
    const unsigned char *class_data, *id_data;
    size_t class_length, id_length;
    uint64_t hash;
    uint32_t generation; /* the page it was read on: a slot of another page is empty */
    int flags;
} mc_name_slot;

enum { MC_NAME_SLOTS = 4096 };

typedef struct {
    mc_name_slot slots[MC_NAME_SLOTS];
    size_t used;
    uint32_t generation; /* the page being read; 0 marks no slot */
} mc_name_cache;

/* One cache a thread, kept from page to page: emptied by the next generation, not by clearing
 * its 4,096 slots (nor by a fresh 200 KB allocation, a page's worth of page faults) on every
 * page. Thread-local: a worker thread may read a long page while the loop reads a short one. */
static _Thread_local mc_name_cache mc_names_of_thread;

static mc_name_cache *
mc_fresh_name_cache(void)
{
    mc_name_cache *cache = &mc_names_of_thread;
    if (++cache->generation == 0) { /* wrapped: every slot's old generation could match again */
        memset(cache->slots, 0, sizeof cache->slots);
        cache->generation = 1;
    }
    cache->used = 0;
    return cache;
}

static int mc_class_id_flags(const lxb_attr *class_attr, const lxb_attr *id_attr,
                             mc_buffer *scratch);

static uint64_t
mc_hash(uint64_t hash, const unsigned char *data, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        hash = (hash ^ data[i]) * 0x100000001b3ULL;
    }
    return hash;
}

static int
mc_names_flags(const lxb_attr *const attrs[MC_NAMES], mc_buffer *scratch, mc_name_cache *cache)
{
    int flags = 0;
    unsigned char lowered[32];
    const lxb_attr *role = attrs[MC_ROLE];
    if (has_value(role) && role->value->length > 0) {
        size_t length = mc_lowered(role, lowered, sizeof lowered);
        if (length <= sizeof lowered) {
            if (mc_equals_any(&MC.rules[RULE_ROLES_OUT], lowered, length)) {
                flags |= NAMED_BOILERPLATE;
            } else if (mc_equals_any(&MC.rules[RULE_ROLES_IN], lowered, length)) {
                flags |= NAMED_CONTENT;
            }
        }
    }
    const lxb_attr *itemprop = attrs[MC_ITEMPROP];
    if (has_value(itemprop) && itemprop->value->length > 0) {
        size_t length = mc_lowered(itemprop, lowered, sizeof lowered);
        if (length == 11 && memcmp(lowered, "articlebody", 11) == 0) {
            flags |= NAMED_ARTICLE_BODY | NAMED_CONTENT;
        }
    }
    const lxb_attr *class_attr = attrs[MC_CLASS];
    const lxb_attr *id_attr = attrs[MC_ID];
    bool has_class = has_value(class_attr) && class_attr->value->length > 0;
    bool has_id = has_value(id_attr) && id_attr->value->length > 0;
    if (!has_class && !has_id) {
        return flags;
    }
    const unsigned char *class_data = has_class ? class_attr->value->data : NULL;
    const unsigned char *id_data = has_id ? id_attr->value->data : NULL;
    size_t class_length = has_class ? class_attr->value->length : 0;
    size_t id_length = has_id ? id_attr->value->length : 0;
    uint64_t hash = mc_hash(mc_hash(0xcbf29ce484222325ULL, class_data, class_length) ^ 1, id_data,
                            id_length);
    size_t at = (size_t) (hash % MC_NAME_SLOTS);
    for (;;) {
        mc_name_slot *slot = &cache->slots[at];
        if (slot->generation != cache->generation) {
            int named = mc_class_id_flags(has_class ? class_attr : NULL, has_id ? id_attr : NULL,
                                          scratch);
            if (named < 0) {
                return -1;
            }
            if (cache->used < MC_NAME_SLOTS / 2) {
                *slot = (mc_name_slot) {class_data, id_data,         class_length,
                                        id_length,  hash,    cache->generation, named};
                cache->used++;
            }
            return flags | named;
        }
        if (slot->hash == hash && slot->class_length == class_length
            && slot->id_length == id_length
            && (class_length == 0 || memcmp(slot->class_data, class_data, class_length) == 0)
            && (id_length == 0 || memcmp(slot->id_data, id_data, id_length) == 0)) {
            return flags | slot->flags;
        }
        at = (at + 1) % MC_NAME_SLOTS;
    }
}

static int
mc_class_id_flags(const lxb_attr *class_attr, const lxb_attr *id_attr, mc_buffer *scratch)
{
    int flags = 0;
    bool has_class = class_attr != NULL, has_id = id_attr != NULL;
    /* The names, lowered, without BEM modifiers. */
    scratch->length = 0;
    const lxb_attr *parts[2] = {has_class ? class_attr : NULL, has_id ? id_attr : NULL};
    bool modifier = false;
    for (int p = 0; p < 2; p++) {
        if (parts[p] == NULL) {
            continue;
        }
        if (p == 1 && has_class) {
            if (mc_add(scratch, " ", 1) < 0) {
                return -1;
            }
            modifier = false;
        }
        const unsigned char *data = parts[p]->value->data;
        size_t length = parts[p]->value->length;
        if (mc_reserve(scratch, length) < 0) {
            return -1;
        }
        for (size_t i = 0; i < length; i++) {
            unsigned char c = data[i];
            if (modifier && !mc_space(c)) {
                continue;
            }
            modifier = false;
            if (c == '-' && i + 1 < length && data[i + 1] == '-') {
                modifier = true;
                continue;
            }
            scratch->data[scratch->length++] = (char) ((c >= 'A' && c <= 'Z') ? c + 32 : c);
        }
    }
    const unsigned char *names = (const unsigned char *) scratch->data;
    size_t length = scratch->length;
    size_t first = 0;
    while (first < length && mc_space(names[first])) {
        first++;
    }
    size_t first_end = first;
    while (first_end < length && !mc_space(names[first_end])) {
        first_end++;
    }
    if (mc_any_part(&MC.rules[RULE_CONTENT], 0, names + first, first_end - first)) {
        flags |= NAMED_CONTENT;
    }
    /* The names without - and _, after them in the scratch buffer. */
    if (mc_reserve(scratch, length) < 0) {
        return -1;
    }
    names = (const unsigned char *) scratch->data;
    unsigned char *joined = (unsigned char *) scratch->data + length;
    size_t joined_length = 0;
    for (size_t i = 0; i < length; i++) {
        if (names[i] != '-' && names[i] != '_') {
            joined[joined_length++] = names[i];
        }
    }
    if (mc_any_part(&MC.rules[RULE_ARTICLE_BODY], 0, joined, joined_length)) {
        flags |= NAMED_ARTICLE_BODY;
    }
    if (mc_boilerplate_words(names, length)) {
        flags |= NAMED_BOILERPLATE;
    }
    return flags;
}

/* --- the body's elements (crawler.page.main_content._read) ----------------------------------- */

/* Counts are 32 bits: a page's characters are bounded by fetch.max_body_bytes (5 MiB unless
 * set), and a table of 500,000 elements (a page of empty tags) is 48 MB at this size. */
typedef struct {
    const lxb_node *node;
    uintptr_t tag;
    double score, good, noise;
    int32_t parent, end, first_child, last_child, next_sibling;
    int32_t own_chars, own_commas, inline_chars, inline_links, chars, link_chars, commas;
    uint32_t flags; /* the tag's */
    bool named, framed, article_body, later_article, gone, skip;
} mc_element;

typedef struct {
    mc_element *items;
    Py_ssize_t count, capacity;
} mc_table;

static Py_ssize_t
mc_new_element(mc_table *table, const lxb_node *node, uintptr_t tag, Py_ssize_t parent)
{
    if (table->count == table->capacity) {
        Py_ssize_t capacity = table->capacity ? 2 * table->capacity : 256;
        mc_element *grown = realloc(table->items, (size_t) capacity * sizeof(mc_element));
        if (grown == NULL) {
            return -1;
        }
        table->items = grown;
        table->capacity = capacity;
    }
    Py_ssize_t index = table->count++;
    mc_element *element = &table->items[index];
    memset(element, 0, sizeof *element);
    element->node = node;
    element->tag = tag;
    element->flags = mc_flags(tag);
    element->parent = parent;
    element->end = index + 1;
    element->first_child = element->last_child = element->next_sibling = -1;
    if (parent >= 0) {
        mc_element *above = &table->items[parent];
        if (above->last_child >= 0) {
            table->items[above->last_child].next_sibling = index;
        } else {
            above->first_child = index;
        }
        above->last_child = index;
    }
    return index;
}

/* An <a> with an href, or with no id (crawler.page.main_content._is_link). */
static bool
mc_is_link(const lxb_node *node)
{
    const lxb_attr *href = mc_attr(node, MC_HREF);
    return (has_value(href) && href->value->length != 0) || !has_value(mc_attr(node, MC_ID));
}

/* Where the walk down the body is: the element read last on the way down, the nearest block,
 * whether inside a link, and the <article>s around (-1: inside one after one that ended). */
typedef struct {
    int32_t holder, block, around;
    bool link;
} mc_frame;

static int
mc_read(const lxb_node *body, mc_table *table, mc_buffer *scratch, mc_name_cache *cache)
{
    if (mc_new_element(table, body, TAG_BODY, -1) < 0) {
        return -1;
    }
    /* One frame a level of the elements the walk is inside: memory as deep as the tree, not as
     * wide (a page of 500,000 sibling elements). */
    Py_ssize_t depth = 0, capacity;
    mc_frame *frames = mc_take_items(MC_KEEP_FRAMES, sizeof(mc_frame), &capacity);
    long articles = 0;
    int status = 0;
    if (mc_grow((void **) &frames, &capacity, 0, sizeof(mc_frame)) < 0) {
        return -1;
    }
    frames[depth++] = (mc_frame) {0, 0, 0, false};
    const lxb_node *node = body->first_child;
    while (node != NULL) {
        const mc_frame frame = frames[depth - 1];
        bool descend = false;
        if (node->type == NODE_TEXT) {
            const unsigned char *data;
            size_t length;
            mc_text_of(node, &data, &length);
            long commas;
            long chars = mc_chars_commas(data, length, &commas);
            if (chars) {
                mc_element *holder = &table->items[frame.holder];
                mc_element *block = &table->items[frame.block];
                holder->own_chars += chars;
                holder->own_commas += commas;
                block->inline_chars += chars;
                if (frame.link) {
                    block->inline_links += chars;
                }
            }
        } else if (node->type == NODE_ELEMENT && !(mc_flags(node->local_name) & MC_SKIPPED)) {
            const lxb_attr *attrs[MC_NAMES];
            mc_collect(node, attrs);
            /* role="navigation", as navigation_role reads it: never read. */
            const lxb_attr *role = attrs[MC_ROLE];
            bool navigation = has_value(role) && role->value->length == 10
                              && ascii_ieq(role->value->data, "navigation", 10);
            uintptr_t tag = node->local_name;
            int named = navigation ? 0 : mc_names_flags(attrs, scratch, cache);
            if (named < 0) {
                status = -1;
                goto done;
            }
            bool boilerplate = !(mc_flags(tag) & MC_NEVER_NAMED) && (named & NAMED_BOILERPLATE)
                               && !(named & NAMED_CONTENT);
            /* An empty element counts nothing and no reading chooses it (mc_unlisted_read). */
            bool counted = node->first_child != NULL || boilerplate || (mc_flags(tag) & MC_FRAME)
                           || tag == MC.tags[MC_ARTICLE] || tag == MC.tags[MC_H1];
            if (!navigation && counted) {
                Py_ssize_t index = mc_new_element(table, node, tag, frame.holder);
                if (index < 0) {
                    status = -1;
                    goto done;
                }
                mc_element *element = &table->items[index];
                long around = frame.around;
                if (tag == MC.tags[MC_ARTICLE] && around >= 0) {
                    around = articles > around ? -1 : around + 1;
                    articles++;
                }
                element->later_article = around < 0;
                element->article_body = named & NAMED_ARTICLE_BODY;
                element->named = boilerplate;
                element->framed = element->flags & MC_FRAME;
                if (node->first_child != NULL) {
                    if (mc_grow((void **) &frames, &capacity, depth, sizeof(mc_frame)) < 0) {
                        status = -1;
                        goto done;
                    }
                    frames[depth++] = (mc_frame) {
                        (int32_t) index,
                        (element->flags & MC_BLOCK) ? (int32_t) index : frame.block,
                        (int32_t) around,
                        frame.link || (tag == MC.tags[MC_A] && mc_is_link(node)),
                    };
                    descend = true;
                }
            }
        }
        if (descend) {
            node = node->first_child;
            continue;
        }
        /* On to the next node in document order, leaving the elements whose last child this is. */
        while (node != NULL && node->next == NULL) {
            node = node->parent;
            if (node == body || node == NULL) {
                node = NULL;
                break;
            }
            depth--;
        }
        if (node != NULL) {
            node = node->next;
        }
    }
    for (Py_ssize_t i = table->count - 1; i >= 0; i--) {
        mc_element *element = &table->items[i];
        element->chars += element->own_chars;
        element->commas += element->own_commas;
        element->link_chars += element->inline_links;
        if (element->parent >= 0) {
            mc_element *parent = &table->items[element->parent];
            parent->chars += element->chars;
            parent->link_chars += element->link_chars;
            parent->commas += element->commas;
            if (element->end > parent->end) {
                parent->end = element->end;
            }
        }
    }
done:
    mc_give(MC_KEEP_FRAMES, frames, (size_t) capacity * sizeof(mc_frame));
    return status;
}

/* --- choosing (crawler.page.main_content._Reading and choose) ------------------------------- */

static double
mc_good_of(const mc_table *table, const Py_ssize_t *kept, Py_ssize_t count)
{
    double good = 0.0;
    for (Py_ssize_t i = 0; i < count; i++) {
        good += table->items[kept[i]].good;
    }
    return good;
}

/* One element's content net of its links (`good`) and its noise, before its descendants' are
 * added (crawler.page.main_content: the mass reading). */
static void
mc_own_mass(mc_element *element)
{
    long chars = element->inline_chars, links = element->inline_links;
    if (!chars || element->gone) {
        return;
    }
    if (chars >= MC.min_block_chars && links < MC.link_dense * chars) {
        double good = (double) (chars - links);
        if (element->article_body) {
            good *= MC.article_body_bonus;
        }
        if (element->later_article) {
            good *= MC.later_article;
        }
        element->good = good;
        element->noise = (double) links;
    } else {
        element->noise = (double) chars;
    }
}

/* What element `i`'s text block adds to its holder's score and that one's parent's (the
 * readability reading). */
static void
mc_own_score(mc_element *items, Py_ssize_t i)
{
    mc_element *element = &items[i];
    long chars, links, commas;
    Py_ssize_t holder;
    if (element->gone) {
        return;
    }
    if (element->flags & MC_TEXT_BLOCK) {
        chars = element->chars;
        links = element->link_chars;
        commas = element->commas;
        holder = element->parent;
    } else if ((element->flags & MC_OWN_TEXT_BLOCK) && element->own_chars >= MC.own_text_chars) {
        chars = element->own_chars;
        links = 0;
        commas = element->own_commas;
        holder = i;
    } else {
        return;
    }
    if (chars < MC.min_block_chars || holder < 0) {
        return;
    }
    long lengths = chars / 100 < 3 ? chars / 100 : 3;
    long linked = links < chars ? links : chars;
    double score = (double) (1 + commas + lengths) * (1 - (double) linked / (double) chars);
    items[holder].score += score;
    if (items[holder].parent >= 0) {
        items[items[holder].parent].score += score / 2;
    }
}

/* Readability's choice into `kept`, from `best`, the element of the highest score (-1: none
 * scores); how many. */
static Py_ssize_t
mc_chosen(const mc_table *table, Py_ssize_t best, Py_ssize_t *kept)
{
    const mc_element *items = table->items;
    if (best < 0) {
        return 0;
    }
    double top = items[best].score;
    while (items[best].parent >= 0 && items[items[best].parent].score >= MC.climb * top) {
        best = items[best].parent;
    }
    Py_ssize_t parent = items[best].parent;
    if (parent < 0) {
        kept[0] = best;
        return 1;
    }
    double threshold = items[best].score * MC.sibling_share;
    if (threshold < MC.sibling_floor) {
        threshold = MC.sibling_floor;
    }
    Py_ssize_t count = 0;
    for (Py_ssize_t child = items[parent].first_child; child >= 0;
         child = items[child].next_sibling) {
        if (child == best || (!items[child].gone && items[child].score >= threshold)) {
            kept[count++] = child;
        }
    }
    return count;
}

static bool
mc_holds(const mc_element *items, Py_ssize_t outer, Py_ssize_t inner)
{
    return outer <= inner && inner < items[outer].end;
}

/* Of the elements named as the article's body inside `mass`, the one holding `chosen`, when it
 * holds most of their content; else -1. */
static Py_ssize_t
mc_named_body(const mc_table *table, Py_ssize_t mass, Py_ssize_t chosen)
{
    const mc_element *items = table->items;
    Py_ssize_t holder = -1, last = -1;
    double all = 0.0;
    for (Py_ssize_t i = mass; i < items[mass].end; i++) {
        if (items[i].article_body && !items[i].gone && !(last >= 0 && mc_holds(items, last, i))) {
            last = i;
            all += items[i].good;
            if (holder < 0 && mc_holds(items, i, chosen)) {
                holder = i;
            }
        }
    }
    return holder >= 0 && !(items[holder].good < MC.named_share * all) ? holder : -1;
}

/* One reading, with the names heeded or not: what it keeps into `kept`; how many. */
static Py_ssize_t
mc_reading(mc_table *table, bool by_names, Py_ssize_t *kept)
{
    mc_element *items = table->items;
    double total = (double) items[0].chars;
    /* Three passes over the table where the two readings took seven: rows come in document
     * order, a parent before its children, so what goes, each element's own mass and what its
     * block adds to the scores above it are one pass; the sums up the tree and the bonuses,
     * once every score is in, one pass back; the two bests one more. */
    for (Py_ssize_t i = 0; i < table->count; i++) {
        mc_element *element = &items[i];
        element->score = element->good = element->noise = 0.0;
        element->gone = (element->parent >= 0 && items[element->parent].gone)
                        || ((element->framed || (by_names && element->named))
                            && (double) element->chars < MC.keep_share * total);
        mc_own_mass(element);
        mc_own_score(items, i);
    }
    for (Py_ssize_t i = table->count - 1; i >= 0; i--) {
        mc_element *element = &items[i];
        if (element->parent >= 0 && !element->gone) {
            items[element->parent].good += element->good;
            items[element->parent].noise += element->noise;
        }
        if (element->article_body) {
            element->score *= MC.article_body_bonus;
        }
        if (element->later_article) {
            element->score *= MC.later_article;
        }
    }
    Py_ssize_t mass = -1, best = -1;
    for (Py_ssize_t i = 0; i < table->count; i++) {
        const mc_element *element = &items[i];
        if (element->gone) {
            continue;
        }
        if (mass < 0 || element->good - element->noise > items[mass].good - items[mass].noise) {
            mass = i;
        }
        if (element->score > 0 && (best < 0 || element->score > items[best].score)) {
            best = i;
        }
    }
    /* More content than noise, or none: an empty element (net 0) is not in the table. */
    mass = mass >= 0 && items[mass].good > items[mass].noise ? mass : -1;
    Py_ssize_t count = mc_chosen(table, best, kept);
    if (mass >= 0 && (count == 0 || mc_good_of(table, kept, count) < MC.mass_share * items[mass].good)) {
        Py_ssize_t named = count ? mc_named_body(table, mass, kept[0]) : -1;
        kept[0] = named >= 0 ? named : mass;
        count = 1;
    }
    return count;
}

/* The lead before the kept content, put in front of it in `kept`; the new count. */
static Py_ssize_t
mc_lead(const mc_table *table, Py_ssize_t *kept, Py_ssize_t count, Py_ssize_t *lead)
{
    const mc_element *items = table->items;
    Py_ssize_t start = kept[0], heading = -1;
    for (Py_ssize_t i = start - 1; i >= 0; i--) {
        if (items[i].tag == MC.tags[MC_H1] && !items[i].gone) {
            heading = i;
            break;
        }
    }
    if (heading < 0 || mc_holds(items, heading, start)) {
        return count;
    }
    Py_ssize_t leads = 0;
    long chars = 0, kept_chars = 0;
    for (Py_ssize_t i = items[heading].end; i < start; i++) {
        const mc_element *element = &items[i];
        bool inside = false;
        for (Py_ssize_t j = 0; j < leads && !inside; j++) {
            inside = mc_holds(items, lead[j], i);
        }
        if (element->gone || mc_holds(items, i, start) || inside
            || element->inline_chars < MC.min_block_chars
            || element->inline_links >= MC.link_dense * element->inline_chars) {
            continue;
        }
        lead[leads++] = i;
        chars += element->chars;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        kept_chars += items[kept[i]].chars;
    }
    if (leads == 0 || chars > MC.lead_share * kept_chars) {
        return count;
    }
    memmove(kept + leads, kept, (size_t) count * sizeof *kept);
    memcpy(kept, lead, (size_t) leads * sizeof *lead);
    return count + leads;
}

/* Marks what not to read inside the kept content: what is gone, and lists and blocks that are
 * mostly links. */
static void
mc_mark_skipped(mc_table *table, const Py_ssize_t *kept, Py_ssize_t count)
{
    mc_element *items = table->items;
    for (Py_ssize_t i = 0; i < table->count; i++) {
        items[i].skip = items[i].gone;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        const mc_element *root = &items[kept[k]];
        for (Py_ssize_t i = kept[k] + 1; i < root->end; i++) {
            mc_element *element = &items[i];
            if ((element->flags & MC_LINK_LIST)
                && (double) element->link_chars > MC.link_dense * (double) element->chars) {
                element->skip = true;
                i = element->end - 1; /* what is inside goes with it */
            }
        }
    }
}

/* --- reading (crawler.page.markdown.Reading) ------------------------------------------------- */

typedef struct {
    Py_ssize_t lines, blocks;
    long chars;
    bool heading;
} mc_unit;

typedef struct {
    const mc_element *items;
    Py_ssize_t count;
    mc_buffer text, markdown;          /* the lines and the blocks, back to back */
    Py_ssize_t *line_ends, *block_starts;
    Py_ssize_t line_count, block_count, line_capacity, block_capacity;
    mc_unit *units;
    Py_ssize_t unit_count, unit_capacity;
    mc_buffer run_text, run_markdown; /* the inline content being read */
    mc_buffer scratch, scratch2;
    lxb_str *hrefs; /* the links' hrefs, in lexbor's memory, in order */
    Py_ssize_t href_count, href_capacity;
} mc_reader;

static int
mc_line(mc_reader *r, const char *data, size_t length)
{
    if (mc_grow((void **) &r->line_ends, &r->line_capacity, r->line_count, sizeof(Py_ssize_t)) < 0
        || mc_add(&r->text, data, length) < 0) {
        return -1;
    }
    r->line_ends[r->line_count++] = (Py_ssize_t) r->text.length;
    return 0;
}

/* Starts a Markdown block; the caller adds its bytes to r->markdown. */
static int
mc_block_start(mc_reader *r)
{
    if (mc_grow((void **) &r->block_starts, &r->block_capacity, r->block_count,
                sizeof(Py_ssize_t))
        < 0) {
        return -1;
    }
    r->block_starts[r->block_count++] = (Py_ssize_t) r->markdown.length;
    return 0;
}

static int
mc_unit_add(mc_reader *r, Py_ssize_t lines, Py_ssize_t blocks, long chars, bool heading)
{
    if (mc_grow((void **) &r->units, &r->unit_capacity, r->unit_count, sizeof(mc_unit)) < 0) {
        return -1;
    }
    r->units[r->unit_count++] = (mc_unit) {lines, blocks, chars, heading};
    return 0;
}

static int
mc_margin(mc_buffer *buffer, long indent, long quote)
{
    if (mc_repeat(buffer, "> ", (size_t) quote) < 0 || mc_reserve(buffer, (size_t) indent) < 0) {
        return -1;
    }
    memset(buffer->data + buffer->length, ' ', (size_t) indent);
    buffer->length += (size_t) indent;
    return 0;
}

/* Folds `data` into `out` (emptied first). */
static int
mc_fold(mc_buffer *out, const char *data, size_t length)
{
    out->length = 0;
    if (mc_add_folded(out, 0, data, length) < 0) {
        return -1;
    }
    mc_strip_end(out, 0);
    return 0;
}

/* Whether a Markdown line starting so would be read as markup. */
static bool
mc_line_start(const char *data, size_t length)
{
    size_t n = 0;
    if (length == 0) {
        return false;
    }
    if (data[0] == '#') {
        while (n < length && data[n] == '#') {
            n++;
        }
        return n <= 6 && (n == length || data[n] == ' ');
    }
    if (data[0] == '>') {
        return true;
    }
    if (data[0] == '-' || data[0] == '+') {
        if (length == 1 || data[1] == ' ') {
            return true;
        }
    }
    if (data[0] >= '0' && data[0] <= '9') {
        while (n < length && data[n] >= '0' && data[n] <= '9') {
            n++;
        }
        return n <= 9 && n < length && (data[n] == '.' || data[n] == ')')
               && (n + 1 == length || data[n + 1] == ' ');
    }
    if (data[0] == '=' || data[0] == '-') {
        while (n < length && data[n] == data[0]) {
            n++;
        }
        return n >= 3;
    }
    return false;
}

/* A Markdown line, with a backslash where its start would read as markup: before the first
 * character, or, for a number, before its `.` or `)` (a backslash escapes punctuation only). */
static int
mc_escaped_start(mc_buffer *out, const mc_buffer *line, bool check)
{
    size_t at = 0;
    if (!check || !mc_line_start(line->data, line->length)) {
        return mc_add(out, line->data, line->length);
    }
    while (at < line->length && line->data[at] >= '0' && line->data[at] <= '9') {
        at++;
    }
    return mc_add(out, line->data, at) < 0 || mc_add(out, "\\", 1) < 0
                   || mc_add(out, line->data + at, line->length - at) < 0
               ? -1
               : 0;
}

/* The run read so far as a block: a line of text and a Markdown block. */
static int
mc_emit(mc_reader *r, const char *text, size_t text_length, const char *markdown,
        size_t markdown_length, long indent, long quote, const char *prefix)
{
    mc_buffer *folded = &r->scratch;
    long chars = 0;
    bool has_text = false, has_markdown = false;
    if (mc_fold(folded, text, text_length) < 0) {
        return -1;
    }
    if (folded->length > 0) {
        has_text = true;
        chars = mc_chars((const unsigned char *) folded->data, folded->length);
        if (mc_line(r, folded->data, folded->length) < 0) {
            return -1;
        }
    }
    if (mc_fold(folded, markdown, markdown_length) < 0) {
        return -1;
    }
    if (folded->length > 0) {
        has_markdown = true;
        if (mc_block_start(r) < 0 || mc_margin(&r->markdown, indent, quote) < 0
            || mc_adds(&r->markdown, prefix) < 0
            || mc_escaped_start(&r->markdown, folded, !prefix[0]) < 0) {
            return -1;
        }
    }
    if (has_text || has_markdown) {
        return mc_unit_add(r, has_text, has_markdown, chars, prefix[0] == '#');
    }
    return 0;
}

static int
mc_emit_run(mc_reader *r, long indent, long quote, const char *prefix)
{
    int status = mc_emit(r, r->run_text.data, r->run_text.length, r->run_markdown.data,
                         r->run_markdown.length, indent, quote, prefix);
    r->run_text.length = r->run_markdown.length = 0;
    return status;
}

/* Children of an element, with the table index of each element child the reading read. */
typedef struct {
    const lxb_node *node;
    Py_ssize_t next_index;
} mc_children;

/* The next child; its index in `*index` (-1 for a node that is no read element). */
static const lxb_node *
mc_next_child(const mc_reader *r, mc_children *children, const lxb_node **at, Py_ssize_t *index)
{
    const lxb_node *node = *at;
    if (node == NULL) {
        return NULL;
    }
    *at = node->next;
    *index = -1;
    /* An element the reading read is the next one of its table, in document order. */
    Py_ssize_t next = children->next_index;
    if (next < r->count && r->items[next].node == node) {
        *index = next;
        children->next_index = r->items[next].end;
    }
    return node;
}

/* role="navigation", as navigation_role reads it: never read. */
static bool
mc_is_navigation(const lxb_node *node)
{
    const lxb_attr *role = mc_attr(node, MC_ROLE);
    return has_value(role) && role->value->length == 10
           && ascii_ieq(role->value->data, "navigation", 10);
}

/* An element the table leaves out because it is empty (mc_read) is read; one it leaves out as
 * never read (a skipped tag, role="navigation") is not, nor is any other node. */
static bool
mc_unlisted_read(const lxb_node *node)
{
    return node->type == NODE_ELEMENT && node->first_child == NULL
           && !(mc_flags(node->local_name) & MC_SKIPPED) && !mc_is_navigation(node);
}

static bool
mc_skipped(const mc_reader *r, const lxb_node *node, Py_ssize_t index)
{
    return index < 0 ? !mc_unlisted_read(node) : r->items[index].skip;
}

static int mc_block(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth, long indent,
                    long quote);

/* A text node into the run: its text, and its Markdown (escaped unless inside code). */
static int
mc_run_text(mc_reader *r, const lxb_node *node, bool code)
{
    const unsigned char *data;
    size_t length;
    mc_text_of(node, &data, &length);
    if (mc_add_clean(&r->run_text, data, length) < 0) {
        return -1;
    }
    return code ? mc_add_clean(&r->run_markdown, data, length)
                : mc_add_escaped(&r->run_markdown, data, length);
}
static int mc_inline(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth,
                     bool code);

#define FOR_CHILDREN(r, parent_node, parent_index, child, child_index)                           \
    mc_children _children = {(parent_node), (parent_index) + 1};                                 \
    const lxb_node *_at = (parent_node)->first_child;                                            \
    Py_ssize_t child_index;                                                                      \
    for (const lxb_node *child; (child = mc_next_child((r), &_children, &_at, &child_index));)

/* The text under an element as it stands, parts joined by `separator`, into `out`. */
static int
mc_flat(mc_reader *r, const lxb_node *node, Py_ssize_t index, const char *separator,
        mc_buffer *out, bool *first)
{
    FOR_CHILDREN(r, node, index, child, child_index)
    {
        if (child->type == NODE_TEXT) {
            const unsigned char *data;
            size_t length;
            mc_text_of(child, &data, &length);
            if ((!*first && mc_adds(out, separator) < 0) || mc_add_clean(out, data, length) < 0) {
                return -1;
            }
            *first = false;
        } else if (!mc_skipped(r, child, child_index)
                   && mc_flat(r, child, child_index, separator, out, first) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
mc_blocks(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth, long indent,
          long quote)
{
    FOR_CHILDREN(r, node, index, child, child_index)
    {
        if (child->type == NODE_TEXT) {
            if (mc_run_text(r, child, false) < 0) {
                return -1;
            }
            continue;
        }
        if (mc_skipped(r, child, child_index)) {
            continue;
        }
        if (!(mc_flags(child->local_name) & MC_BLOCK)) {
            if (mc_inline(r, child, child_index, depth + 1, false) < 0) {
                return -1;
            }
            continue;
        }
        if (mc_emit_run(r, indent, quote, "") < 0
            || mc_block(r, child, child_index, depth + 1, indent, quote) < 0) {
            return -1;
        }
    }
    return mc_emit_run(r, indent, quote, "");
}

static int
mc_item(mc_reader *r, const lxb_node *node, Py_ssize_t index, const char *marker, long depth,
        long indent, long quote)
{
    long inside = indent + (long) strlen(marker);
    Py_ssize_t first = r->block_count;
    if (mc_blocks(r, node, index, depth, inside, quote) < 0) {
        return -1;
    }
    if (r->block_count == first) {
        return 0;
    }
    /* The item's first block carries the marker in the place its indent holds for it. */
    char *line = r->markdown.data + r->block_starts[first];
    size_t available = (first + 1 < r->block_count ? (size_t) r->block_starts[first + 1]
                                                   : r->markdown.length)
                       - (size_t) r->block_starts[first];
    size_t margin = 2 * (size_t) quote + (size_t) inside;
    if (available < margin) {
        return 0;
    }
    for (size_t i = 0; i < margin; i++) {
        char expected = i < 2 * (size_t) quote ? (i % 2 == 0 ? '>' : ' ') : ' ';
        if (line[i] != expected) {
            return 0;
        }
    }
    memcpy(line + 2 * quote + indent, marker, strlen(marker));
    return 0;
}

static int
mc_list_items(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth, long indent,
              long quote)
{
    bool ordered = node->local_name == MC.tags[MC_OL];
    long number = 1;
    const lxb_attr *start = ordered ? mc_attr(node, MC_START) : NULL;
    if (has_value(start)) {
        const unsigned char *data = start->value->data;
        size_t length = start->value->length, from = 0, to = length;
        bool ascii = true;
        for (size_t i = 0; i < length; i++) {
            ascii = ascii && data[i] < 0x80;
        }
        while (from < to && mc_space(data[from])) {
            from++;
        }
        while (to > from && mc_space(data[to - 1])) {
            to--;
        }
        bool digits = ascii && to > from;
        for (size_t i = from; i < to && digits; i++) {
            digits = data[i] >= '0' && data[i] <= '9';
        }
        if (digits) {
            number = 0;
            for (size_t i = from; i < to && i < from + 9; i++) {
                number = number * 10 + (data[i] - '0');
            }
        }
    }
    FOR_CHILDREN(r, node, index, child, child_index)
    {
        if (mc_skipped(r, child, child_index)) {
            continue;
        }
        if (child->local_name == MC.tags[MC_LI]) {
            char marker[32];
            if (ordered) {
                snprintf(marker, sizeof marker, "%ld. ", number);
            } else {
                strcpy(marker, "- ");
            }
            number++;
            if (mc_item(r, child, child_index, marker, depth + 1, indent, quote) < 0) {
                return -1;
            }
        } else if ((mc_flags(child->local_name) & MC_BLOCK)
                   && mc_block(r, child, child_index, depth + 1, indent, quote) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The language a class names: `language-x`, `lang-x` or `highlight-x`, the first found. */
static bool
mc_language_char(unsigned char c)
{
    return mc_alnum(c) || c == '_' || c == '+' || c == '-';
}

static void
mc_language(const mc_buffer *names, const char **language, size_t *length)
{
    static const char *const prefixes[] = {"language-", "lang-", "highlight-"};
    *length = 0;
    for (size_t at = 0; at < names->length; at++) {
        for (size_t p = 0; p < 3; p++) {
            size_t n = strlen(prefixes[p]);
            if (at + n < names->length && memcmp(names->data + at, prefixes[p], n) == 0
                && mc_language_char((unsigned char) names->data[at + n])) {
                size_t end = at + n;
                while (end < names->length && mc_language_char((unsigned char) names->data[end])) {
                    end++;
                }
                *language = names->data + at + n;
                *length = end - at - n;
                return;
            }
        }
    }
}

static int
mc_code_block(mc_reader *r, const lxb_node *node, Py_ssize_t index, long indent, long quote)
{
    mc_buffer *code = &r->scratch2;
    bool first = true;
    code->length = 0;
    if (mc_flat(r, node, index, "", code, &first) < 0) {
        return -1;
    }
    size_t from = 0, to = code->length;
    while (from < to && code->data[from] == '\n') {
        from++;
    }
    while (to > from && code->data[to - 1] == '\n') {
        to--;
    }
    bool blank = true;
    for (size_t i = from; i < to && blank; i++) {
        blank = mc_space((unsigned char) code->data[i]);
    }
    if (blank) {
        return 0;
    }
    Py_ssize_t lines = 0;
    for (size_t start = from, i = from; i <= to; i++) {
        if (i < to && code->data[i] != '\n') {
            continue;
        }
        bool empty = true;
        for (size_t j = start; j < i && empty; j++) {
            empty = mc_space((unsigned char) code->data[j]);
        }
        if (!empty) {
            if (mc_line(r, code->data + start, i - start) < 0) {
                return -1;
            }
            lines++;
        }
        start = i + 1;
    }
    /* The class of the <pre>, and of a <code> that is its first child. */
    mc_buffer *names = &r->scratch;
    names->length = 0;
    const lxb_attr *classes[2] = {mc_attr(node, MC_CLASS), NULL};
    const lxb_node *child = node->first_child;
    if (child != NULL && child->type == NODE_ELEMENT && child->local_name == MC.tags[MC_CODE_TAG]) {
        classes[1] = mc_attr(child, MC_CLASS);
    }
    for (int i = 0; i < 2; i++) {
        if (has_value(classes[i]) && classes[i]->value->length > 0) {
            if ((names->length > 0 && mc_add(names, " ", 1) < 0)
                || mc_add(names, (const char *) classes[i]->value->data,
                          classes[i]->value->length)
                       < 0) {
                return -1;
            }
        }
    }
    const char *language = NULL;
    size_t language_length;
    mc_language(names, &language, &language_length);
    bool long_fence = false;
    for (size_t i = from; i + 2 < to && !long_fence; i++) {
        long_fence = memcmp(code->data + i, "```", 3) == 0;
    }
    const char *fence = long_fence ? "````" : "```";
    if (mc_block_start(r) < 0 || mc_margin(&r->markdown, indent, quote) < 0
        || mc_adds(&r->markdown, fence) < 0
        || mc_add(&r->markdown, language, language_length) < 0) {
        return -1;
    }
    for (size_t start = from, i = from; i <= to; i++) {
        if (i < to && code->data[i] != '\n') {
            continue;
        }
        if (mc_add(&r->markdown, "\n", 1) < 0 || mc_margin(&r->markdown, indent, quote) < 0
            || mc_add(&r->markdown, code->data + start, i - start) < 0) {
            return -1;
        }
        start = i + 1;
    }
    if (mc_add(&r->markdown, "\n", 1) < 0 || mc_margin(&r->markdown, indent, quote) < 0
        || mc_adds(&r->markdown, fence) < 0) {
        return -1;
    }
    return mc_unit_add(r, lines, 1, mc_chars((const unsigned char *) code->data + from, to - from),
                       false);
}

/* Up to `most` rows of a table, with their indices: its <tr>s and those of its row groups. */
typedef struct {
    const lxb_node *node;
    Py_ssize_t index;
} mc_at;

static int
mc_add_at(mc_at **items, Py_ssize_t *count, Py_ssize_t *capacity, const lxb_node *node,
          Py_ssize_t index)
{
    if (mc_grow((void **) items, capacity, *count, sizeof(mc_at)) < 0) {
        return -1;
    }
    (*items)[(*count)++] = (mc_at) {node, index};
    return 0;
}

static bool
mc_holds_cell_blocks(const lxb_node *cell)
{
    const lxb_node *node = cell->first_child;
    while (node != NULL) {
        if (node->type == NODE_ELEMENT && (mc_flags(node->local_name) & MC_CELL_BLOCK)) {
            return true;
        }
        if (node->first_child != NULL) {
            node = node->first_child;
            continue;
        }
        while (node != NULL && node != cell && node->next == NULL) {
            node = node->parent;
        }
        node = (node == NULL || node == cell) ? NULL : node->next;
    }
    return false;
}

static int
mc_table_rows(mc_reader *r, const lxb_node *table, Py_ssize_t index, mc_at **rows,
              Py_ssize_t *count, Py_ssize_t *capacity)
{
    FOR_CHILDREN(r, table, index, child, child_index)
    {
        if (mc_skipped(r, child, child_index)) {
            continue;
        }
        if (child->local_name == MC.tags[MC_TR]) {
            if (mc_add_at(rows, count, capacity, child, child_index) < 0) {
                return -1;
            }
        } else if (mc_flags(child->local_name) & MC_ROW_GROUP) {
            FOR_CHILDREN(r, child, child_index, row, row_index)
            {
                if (row->local_name == MC.tags[MC_TR] && !mc_skipped(r, row, row_index)
                    && mc_add_at(rows, count, capacity, row, row_index) < 0) {
                    return -1;
                }
            }
        }
    }
    return 0;
}

static int mc_inline_children(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth,
                              bool code);

static int
mc_read_table(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth, long indent,
         long quote)
{
    mc_at *rows = NULL, *cells = NULL;
    Py_ssize_t row_count = 0, row_capacity = 0, cell_count = 0, cell_capacity = 0;
    Py_ssize_t *row_cells = NULL; /* where each row's cells start in `cells`, and the end */
    int status = -1;
    if (mc_table_rows(r, node, index, &rows, &row_count, &row_capacity) < 0) {
        goto done;
    }
    row_cells = malloc((size_t) (row_count + 1) * sizeof(Py_ssize_t));
    if (row_cells == NULL) {
        goto done;
    }
    Py_ssize_t width = 0;
    bool laid_out = false;
    for (Py_ssize_t i = 0; i < row_count; i++) {
        row_cells[i] = cell_count;
        FOR_CHILDREN(r, rows[i].node, rows[i].index, cell, cell_index)
        {
            if ((mc_flags(cell->local_name) & MC_CELL)
                && !mc_skipped(r, cell, cell_index)) {
                if (mc_add_at(&cells, &cell_count, &cell_capacity, cell, cell_index) < 0) {
                    goto done;
                }
                laid_out = laid_out || mc_holds_cell_blocks(cell);
            }
        }
        if (cell_count - row_cells[i] > width) {
            width = cell_count - row_cells[i];
        }
    }
    row_cells[row_count] = cell_count;
    if (width < 2 || laid_out) {
        for (Py_ssize_t i = 0; i < cell_count; i++) {
            if (mc_blocks(r, cells[i].node, cells[i].index, depth + 1, indent, quote) < 0) {
                goto done;
            }
        }
        status = 0;
        goto done;
    }
    /* Each row: a line of text (cells apart by a tab) when any cell has text; a Markdown row. */
    mc_buffer line = {0}, markdown = {0}, folded = {0};
    Py_ssize_t added = 0;
    long chars = 0;
    if (mc_block_start(r) < 0) {
        goto rows_done;
    }
    for (Py_ssize_t i = 0; i < row_count; i++) {
        bool any_text = false;
        line.length = 0;
        markdown.length = 0;
        if (mc_margin(&markdown, indent, quote) < 0 || mc_add(&markdown, "|", 1) < 0) {
            goto rows_done;
        }
        for (Py_ssize_t c = row_cells[i]; c < row_cells[i + 1] || c < row_cells[i] + width; c++) {
            bool real = c < row_cells[i + 1];
            if (real && c > row_cells[i] && mc_add(&line, "\t", 1) < 0) {
                goto rows_done;
            }
            if (mc_add(&markdown, " ", 1) < 0) {
                goto rows_done;
            }
            if (real) {
                r->run_text.length = r->run_markdown.length = 0;
                if (mc_inline_children(r, cells[c].node, cells[c].index, depth + 1, false) < 0
                    || mc_fold(&folded, r->run_text.data, r->run_text.length) < 0) {
                    goto rows_done;
                }
                if (folded.length > 0) {
                    any_text = true;
                    chars += mc_chars((const unsigned char *) folded.data, folded.length);
                }
                if (mc_add(&line, folded.data, folded.length) < 0
                    || mc_fold(&folded, r->run_markdown.data, r->run_markdown.length) < 0) {
                    goto rows_done;
                }
                for (size_t k = 0; k < folded.length; k++) {
                    if ((folded.data[k] == '|' && mc_add(&markdown, "\\", 1) < 0)
                        || mc_add(&markdown, folded.data + k, 1) < 0) {
                        goto rows_done;
                    }
                }
                r->run_text.length = r->run_markdown.length = 0;
            }
            if (mc_add(&markdown, " |", 2) < 0) {
                goto rows_done;
            }
        }
        if (any_text) {
            if (mc_line(r, line.data, line.length) < 0) {
                goto rows_done;
            }
            added++;
        }
        if ((i > 0 && mc_add(&r->markdown, "\n", 1) < 0)
            || mc_add(&r->markdown, markdown.data, markdown.length) < 0) {
            goto rows_done;
        }
        if (i == 0) {
            if (mc_add(&r->markdown, "\n", 1) < 0 || mc_margin(&r->markdown, indent, quote) < 0
                || mc_add(&r->markdown, "|", 1) < 0
                || mc_repeat(&r->markdown, " --- |", (size_t) width) < 0) {
                goto rows_done;
            }
        }
    }
    status = mc_unit_add(r, added, 1, chars, false);
rows_done:
    free(line.data);
    free(markdown.data);
    free(folded.data);
done:
    free(rows);
    free(cells);
    free(row_cells);
    return status;
}

static int
mc_href(mc_reader *r, const lxb_attr *attr, mc_buffer *markdown)
{
    char number[32];
    if (mc_grow((void **) &r->hrefs, &r->href_capacity, r->href_count, sizeof(lxb_str)) < 0) {
        return -1;
    }
    r->hrefs[r->href_count] = (lxb_str) {attr->value->data, attr->value->length};
    /* TARGET, the href's number in decimal, TARGET_END (crawler.page.link_marks); by hand, as
     * snprintf parses its format for every link. */
    size_t at = sizeof number;
    number[--at] = '\x04';
    size_t value = (size_t) r->href_count++;
    do {
        number[--at] = (char) ('0' + value % 10);
        value /= 10;
    } while (value != 0);
    number[--at] = '\x03';
    return mc_add(markdown, number + at, sizeof number - at);
}

/* The run's Markdown from `from` with the markup `node` gives it, its whitespace outside. */
static int
mc_marked(mc_reader *r, const lxb_node *node, Py_ssize_t index, size_t text_from, size_t from)
{
    mc_buffer *markdown = &r->run_markdown;
    size_t start = from, end = markdown->length;
    while (start < end && mc_space((unsigned char) markdown->data[start])) {
        start++;
    }
    while (end > start && mc_space((unsigned char) markdown->data[end - 1])) {
        end--;
    }
    if (start == end) {
        return 0;
    }
    uint32_t flags = mc_flags(node->local_name);
    if (node->local_name == MC.tags[MC_A]) {
        const lxb_attr *href = mc_attr(node, MC_HREF);
        if (!has_value(href) || href->value->length == 0
            || r->href_count >= (Py_ssize_t) MC.max_links) {
            return 0;
        }
        /* The target goes in at the end of the core, the mark at its start. */
        mc_buffer tail = {0};
        int status = mc_href(r, href, &tail);
        if (status == 0) {
            status = mc_insert(markdown, end, tail.data, tail.length);
        }
        free(tail.data);
        return status < 0 ? -1 : mc_insert(markdown, start, "\x02", 1);
    }
    if (flags & MC_CODE) {
        mc_buffer *code = &r->scratch2;
        if (mc_fold(code, r->run_text.data + text_from, r->run_text.length - text_from) < 0) {
            return -1;
        }
        bool tick = memchr(code->data ? code->data : "", '`', code->length) != NULL;
        mc_buffer *core = &r->scratch;
        core->length = 0;
        if (mc_adds(core, tick ? "`` " : "`") < 0 || mc_add(core, code->data, code->length) < 0
            || mc_adds(core, tick ? " ``" : "`") < 0) {
            return -1;
        }
        size_t after = markdown->length - end;
        char *tail = malloc(after + 1);
        if (tail == NULL) {
            return -1;
        }
        memcpy(tail, markdown->data + end, after);
        markdown->length = start;
        int status = mc_add(markdown, core->data, core->length) < 0
                             || mc_add(markdown, tail, after) < 0
                         ? -1
                         : 0;
        free(tail);
        return status;
    }
    if (flags & (MC_STRONG | MC_EM)) {
        const char *mark = (flags & MC_STRONG) ? "**" : "*";
        size_t n = strlen(mark);
        if (end - start >= n && memcmp(markdown->data + start, mark, n) == 0
            && memcmp(markdown->data + end - n, mark, n) == 0) {
            return 0; /* <b><strong>x</strong></b>: marked once */
        }
        if (mc_insert(markdown, end, mark, n) < 0 || mc_insert(markdown, start, mark, n) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
mc_inline_children(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth, bool code)
{
    FOR_CHILDREN(r, node, index, child, child_index)
    {
        if (child->type == NODE_TEXT) {
            if (mc_run_text(r, child, code) < 0) {
                return -1;
            }
        } else if (!mc_skipped(r, child, child_index)
                   && mc_inline(r, child, child_index, depth + 1, code) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The flat text of `node` escaped into `out`. */
static int
mc_flat_escaped(mc_reader *r, const lxb_node *node, Py_ssize_t index, mc_buffer *flat,
                mc_buffer *out)
{
    bool first = true;
    flat->length = 0;
    if (mc_flat(r, node, index, " ", flat, &first) < 0) {
        return -1;
    }
    return mc_add_escaped(out, (const unsigned char *) flat->data, flat->length);
}

static int
mc_inline(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth, bool code)
{
    uintptr_t tag = node->local_name;
    uint32_t flags = mc_flags(node->local_name);
    if (depth > MC.deepest) {
        mc_buffer flat = {0};
        bool first = true;
        int status = mc_add(&r->run_text, " ", 1) < 0
                             || mc_flat(r, node, index, " ", &r->run_text, &first) < 0
                             || mc_add(&r->run_text, " ", 1) < 0
                             || mc_add(&r->run_markdown, " ", 1) < 0
                             || mc_flat_escaped(r, node, index, &flat, &r->run_markdown) < 0
                             || mc_add(&r->run_markdown, " ", 1) < 0
                         ? -1
                         : 0;
        free(flat.data);
        return status;
    }
    if (tag == MC.tags[MC_BR]) {
        return mc_add(&r->run_text, " ", 1) < 0 || mc_add(&r->run_markdown, " ", 1) < 0 ? -1 : 0;
    }
    if (tag == MC.tags[MC_IMG]) {
        const lxb_attr *src = mc_attr(node, MC_SRC);
        if (!has_value(src) || src->value->length == 0 || code
            || r->href_count >= (Py_ssize_t) MC.max_links) {
            return 0;
        }
        const lxb_attr *alt = mc_attr(node, MC_ALT);
        mc_buffer *clean = &r->scratch, *folded = &r->scratch2;
        clean->length = 0;
        if ((has_value(alt)
             && mc_add_clean(clean, alt->value->data, alt->value->length) < 0)
            || mc_fold(folded, clean->data, clean->length) < 0
            || mc_add(&r->run_markdown, "\x05", 1) < 0
            || mc_add_escaped(&r->run_markdown, (const unsigned char *) folded->data,
                              folded->length)
                   < 0
            || mc_href(r, src, &r->run_markdown) < 0) {
            return -1;
        }
        return 0;
    }
    size_t text_from = r->run_text.length, from = r->run_markdown.length;
    if (mc_inline_children(r, node, index, depth, code || (flags & MC_CODE)) < 0) {
        return -1;
    }
    if (flags & MC_BLOCK) { /* a block inside inline content: apart by spaces */
        return mc_insert(&r->run_text, text_from, " ", 1) < 0 || mc_add(&r->run_text, " ", 1) < 0
                       || mc_insert(&r->run_markdown, from, " ", 1) < 0
                       || mc_add(&r->run_markdown, " ", 1) < 0
                   ? -1
                   : 0;
    }
    return code ? 0 : mc_marked(r, node, index, text_from, from);
}

static int
mc_block(mc_reader *r, const lxb_node *node, Py_ssize_t index, long depth, long indent,
         long quote)
{
    uint32_t flags = mc_flags(node->local_name);
    uintptr_t tag = node->local_name;
    if (depth > MC.deepest) {
        mc_buffer flat = {0}, escaped = {0};
        bool first = true;
        int status = mc_flat(r, node, index, " ", &flat, &first) < 0
                             || mc_add_escaped(&escaped, (const unsigned char *) flat.data,
                                               flat.length)
                                    < 0
                             || mc_emit(r, flat.data, flat.length, escaped.data, escaped.length,
                                        indent, quote, "")
                                    < 0
                         ? -1
                         : 0;
        free(flat.data);
        free(escaped.data);
        return status;
    }
    long level = (long) ((flags >> MC_HEADING_SHIFT) & 7);
    if (level > 0) {
        static const char *const prefixes[] = {"", "# ", "## ", "### ", "#### ", "##### ",
                                               "###### "};
        return mc_inline_children(r, node, index, depth, false) < 0
                       || mc_emit_run(r, indent, quote, prefixes[level]) < 0
                   ? -1
                   : 0;
    }
    if (tag == MC.tags[MC_PRE]) {
        return mc_code_block(r, node, index, indent, quote);
    }
    if (tag == MC.tags[MC_HR]) {
        return mc_block_start(r) < 0 || mc_margin(&r->markdown, indent, quote) < 0
                       || mc_add(&r->markdown, "---", 3) < 0 || mc_unit_add(r, 0, 1, 0, false) < 0
                   ? -1
                   : 0;
    }
    if (flags & MC_LIST) {
        return mc_list_items(r, node, index, depth, indent, quote);
    }
    if (tag == MC.tags[MC_LI]) { /* outside a list */
        return mc_item(r, node, index, "- ", depth, indent, quote);
    }
    if (tag == MC.tags[MC_BLOCKQUOTE]) {
        return mc_blocks(r, node, index, depth, indent, quote + 1);
    }
    if (tag == MC.tags[MC_TABLE]) {
        return mc_read_table(r, node, index, depth, indent, quote);
    }
    if (tag == MC.tags[MC_BR]) {
        return 0;
    }
    return mc_blocks(r, node, index, depth, indent, quote);
}

/* --- the whole (crawler.page.main_content.python_main_parts) -------------------------------- */

/* A reader of `table`, its arrays and buffers the thread's kept ones. */
static void
mc_reader_start(mc_reader *r, const mc_table *table)
{
    *r = (mc_reader) {0};
    r->items = table->items;
    r->count = table->count;
    r->text = mc_take_buffer(MC_KEEP_READ_TEXT);
    r->markdown = mc_take_buffer(MC_KEEP_READ_MARKDOWN);
    r->line_ends = mc_take_items(MC_KEEP_LINE_ENDS, sizeof(Py_ssize_t), &r->line_capacity);
    r->block_starts = mc_take_items(MC_KEEP_BLOCK_STARTS, sizeof(Py_ssize_t), &r->block_capacity);
    r->units = mc_take_items(MC_KEEP_UNITS, sizeof(mc_unit), &r->unit_capacity);
    r->run_text = mc_take_buffer(MC_KEEP_RUN_TEXT);
    r->run_markdown = mc_take_buffer(MC_KEEP_RUN_MARKDOWN);
    r->scratch = mc_take_buffer(MC_KEEP_SCRATCH1);
    r->scratch2 = mc_take_buffer(MC_KEEP_SCRATCH2);
}

static void
mc_reader_free(mc_reader *r)
{
    mc_give_buffer(MC_KEEP_READ_TEXT, &r->text);
    mc_give_buffer(MC_KEEP_READ_MARKDOWN, &r->markdown);
    mc_give(MC_KEEP_LINE_ENDS, r->line_ends, (size_t) r->line_capacity * sizeof(Py_ssize_t));
    mc_give(MC_KEEP_BLOCK_STARTS, r->block_starts,
            (size_t) r->block_capacity * sizeof(Py_ssize_t));
    mc_give(MC_KEEP_UNITS, r->units, (size_t) r->unit_capacity * sizeof(mc_unit));
    r->line_ends = r->block_starts = NULL;
    r->units = NULL;
    mc_give_buffer(MC_KEEP_RUN_TEXT, &r->run_text);
    mc_give_buffer(MC_KEEP_RUN_MARKDOWN, &r->run_markdown);
    mc_give_buffer(MC_KEEP_SCRATCH1, &r->scratch);
    mc_give_buffer(MC_KEEP_SCRATCH2, &r->scratch2);
}

/* Reads `roots` (with their indices) into `r`. */
static int
mc_read_roots(mc_reader *r, const Py_ssize_t *roots, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        const mc_element *root = &r->items[roots[i]];
        if (root->flags & MC_BLOCK || roots[i] == 0) {
            if (mc_block(r, root->node, roots[i], 0, 0, 0) < 0) {
                return -1;
            }
        } else if (mc_inline(r, root->node, roots[i], 0, false) < 0
                   || mc_emit_run(r, 0, 0, "") < 0) {
            return -1;
        }
    }
    return 0;
}

/* What the reading gives, built without the GIL: the text, the Markdown, the hrefs, and why
 * the whole body was read (NULL: it was not). */
typedef struct {
    mc_buffer text, markdown, frame;
    lxb_str *hrefs;
    Py_ssize_t href_count;
    const char *fallback;
    char fallback_text[64];
} mc_output;

/* What `r` read into `out`, less the scraps at either end when `trim`. */
static int
mc_result(const mc_reader *r, bool trim, mc_output *out)
{
    Py_ssize_t start = 0, end = r->unit_count;
    if (trim) {
        while (end > 0 && (r->units[end - 1].chars < MC.scrap_chars || r->units[end - 1].heading)) {
            end--;
        }
        while (start < end && r->units[start].chars < MC.scrap_chars && !r->units[start].heading) {
            start++;
        }
    }
    Py_ssize_t lines[2] = {0, 0}, blocks[2] = {0, 0};
    for (Py_ssize_t i = 0; i < end; i++) {
        if (i < start) {
            lines[0] += r->units[i].lines;
            blocks[0] += r->units[i].blocks;
        }
        lines[1] += r->units[i].lines;
        blocks[1] += r->units[i].blocks;
    }
    out->text.length = out->markdown.length = 0;
    for (Py_ssize_t i = lines[0]; i < lines[1]; i++) {
        Py_ssize_t from = i > 0 ? r->line_ends[i - 1] : 0;
        if ((i > lines[0] && mc_add(&out->text, "\n", 1) < 0)
            || mc_add(&out->text, r->text.data + from, (size_t) (r->line_ends[i] - from)) < 0) {
            return -1;
        }
    }
    for (Py_ssize_t i = blocks[0]; i < blocks[1]; i++) {
        Py_ssize_t to = i + 1 < r->block_count ? r->block_starts[i + 1]
                                               : (Py_ssize_t) r->markdown.length;
        if ((i > blocks[0] && mc_add(&out->markdown, "\n\n", 2) < 0)
            || mc_add(&out->markdown, r->markdown.data + r->block_starts[i],
                      (size_t) (to - r->block_starts[i]))
                   < 0) {
            return -1;
        }
    }
    return 0;
}

static int
mc_parts(mc_table *table, const Py_ssize_t *roots, Py_ssize_t count, bool trim,
         const char *fallback, mc_output *out)
{
    mc_reader r;
    int status = -1;
    mc_reader_start(&r, table);
    if (mc_read_roots(&r, roots, count) < 0 || mc_result(&r, trim, out) < 0) {
        goto done;
    }
    if (fallback == NULL && out->text.length == 0) {
        /* What was chosen reads as nothing: all of it. */
        for (Py_ssize_t i = 0; i < table->count; i++) {
            table->items[i].skip = false;
        }
        Py_ssize_t body = 0;
        mc_reader_free(&r);
        return mc_parts(table, &body, 1, false, "no block of text to choose", out);
    }
    out->fallback = fallback;
    out->hrefs = r.hrefs;
    out->href_count = r.href_count;
    r.hrefs = NULL;
    status = 0;
done:
    mc_reader_free(&r);
    return status;
}

/* The text of the body outside the main content, its text nodes trimmed and a space apart
 * (crawler.page.main_content.frame_text): outside the kept roots, or in what is skipped inside
 * them; never in a tag no reading reads, nor where role="navigation" (the page walk's
 * nosnippet_text). The table's rows are matched
 * to the walk's elements in document order, as the reading matches them. */
static int
mc_frame_text(const lxb_node *body, const mc_table *table, const Py_ssize_t *kept, Py_ssize_t count,
         mc_buffer *out)
{
    const mc_element *items = table->items;
    /* skipped[i]: the rows before row i that are skipped. Inside the main content, an element
     * whose rows hold none adds nothing to the frame: the walk steps over it (on the Python
     * documentation's pages, most of the body). */
    Py_ssize_t *skipped = malloc((size_t) (table->count + 1) * sizeof *skipped);
    if (skipped == NULL) {
        return -1;
    }
    skipped[0] = 0;
    for (Py_ssize_t i = 0; i < table->count; i++) {
        skipped[i + 1] = skipped[i] + items[i].skip;
    }
    /* The body itself may be the one root: then all but what is skipped is main content. */
    bool in_main = count > 0 && kept[0] == 0;
    Py_ssize_t next = 1, root = in_main ? 1 : 0;
    const lxb_node *main_root = in_main ? body : NULL, *frame_root = NULL;
    const lxb_node *node = in_main && skipped[table->count] == skipped[1] ? NULL : body->first_child;
    int status = 0;
    while (node != NULL) {
        bool descend = false;
        if (node->type == NODE_TEXT) {
            if (!in_main) {
                const unsigned char *data;
                size_t length;
                mc_text_of(node, &data, &length);
                while (length > 0 && mc_space(data[0])) {
                    data++;
                    length--;
                }
                while (length > 0 && mc_space(data[length - 1])) {
                    length--;
                }
                if (length > 0
                    && ((out->length > 0 && mc_add(out, " ", 1) < 0)
                        || mc_add(out, (const char *) data, length) < 0)) {
                    status = -1;
                    break;
                }
            }
        } else if (node->type == NODE_ELEMENT && next < table->count && items[next].node == node) {
            /* An element with children is a row unless no reading reads it (a skipped tag,
             * role="navigation"): one that is no row holds nothing to read. */
            Py_ssize_t index = next++;
            if (!in_main && root < count && index == kept[root]) {
                in_main = true;
                main_root = node;
                root++;
            } else if (in_main && items[index].skip) {
                in_main = false;
                frame_root = node;
            }
            descend = node->first_child != NULL;
            if (descend && in_main && skipped[items[index].end] == skipped[index]) {
                descend = false;
                next = items[index].end;
            }
        }
        if (descend) {
            node = node->first_child;
            continue;
        }
        /* On to the next node in document order, leaving the elements whose last child this is. */
        for (;;) {
            if (node == frame_root) {
                in_main = true;
                frame_root = NULL;
            } else if (node == main_root) {
                in_main = false;
                main_root = NULL;
            }
            if (node->next != NULL) {
                node = node->next;
                break;
            }
            node = node->parent;
            if (node == body || node == NULL) {
                node = NULL;
                break;
            }
        }
    }
    free(skipped);
    return status;
}

/* The whole reading of `body` into `out`; it takes no Python object, so it runs without the
 * GIL (a worker thread reads a long page while the event loop goes on). -1: out of memory. */
static int
mc_compute(const lxb_node *body, mc_output *out)
{
    mc_table table = {0};
    table.items = mc_take_items(MC_KEEP_TABLE, sizeof(mc_element), &table.capacity);
    mc_buffer scratch = mc_take_buffer(MC_KEEP_SCRATCH);
    Py_ssize_t *kept = NULL, *lead = NULL;
    int status = -1;
    int read = mc_read(body, &table, &scratch, mc_fresh_name_cache());
    if (read < 0) {
        goto done;
    }
    kept = malloc(2 * (size_t) table.count * sizeof(Py_ssize_t));
    lead = malloc((size_t) table.count * sizeof(Py_ssize_t));
    if (kept == NULL || lead == NULL) {
        goto done;
    }
    Py_ssize_t body_index = 0;
    if ((double) table.items[0].chars < MC.min_page_chars) {
        snprintf(out->fallback_text, sizeof out->fallback_text, "under %ld characters of text",
                 (long) MC.min_page_chars);
        status = mc_parts(&table, &body_index, 1, false, out->fallback_text, out);
        goto done;
    }
    Py_ssize_t count = mc_reading(&table, true, kept);
    double got = mc_good_of(&table, kept, count);
    if (got < MC.names_misled_chars) {
        Py_ssize_t *plain = kept + table.count;
        Py_ssize_t plain_count = mc_reading(&table, false, plain);
        if (got < MC.names_misled * mc_good_of(&table, plain, plain_count)) {
            memcpy(kept, plain, (size_t) plain_count * sizeof *kept);
            count = plain_count;
        } else {
            count = mc_reading(&table, true, kept);
        }
    }
    if (count == 0) {
        status = mc_parts(&table, &body_index, 1, false, "no block of text to choose", out);
        goto done;
    }
    count = mc_lead(&table, kept, count, lead);
    mc_mark_skipped(&table, kept, count);
    status = mc_parts(&table, kept, count, true, NULL, out);
    if (status == 0 && out->fallback == NULL) {
        status = mc_frame_text(body, &table, kept, count, &out->frame);
    }
done:
    mc_give(MC_KEEP_TABLE, table.items, (size_t) table.capacity * sizeof(mc_element));
    mc_give_buffer(MC_KEEP_SCRATCH, &scratch);
    free(kept);
    free(lead);
    return status;
}

static PyObject *
mc_str(const char *data, size_t length)
{
    /* "replace": bytes that are no UTF-8 (a page's lone surrogates) read as U+FFFD. */
    return PyUnicode_DecodeUTF8(data ? data : "", (Py_ssize_t) length, "replace");
}

/* The reading of the body at the address `number` into `out` (its buffers the thread's kept
 * ones), without the GIL; -1 with an exception set. mc_output_free frees `out` either way. */
static int
mc_run(PyObject *number, mc_output *out)
{
    uintptr_t address;
    *out = (mc_output) {0};
    if (!MC.ready) {
        PyErr_SetString(PyExc_RuntimeError, "main_parts before main_configure");
        return -1;
    }
    if (!address_of(number, &address)) {
        return -1;
    }
    out->text = mc_take_buffer(MC_KEEP_TEXT);
    out->markdown = mc_take_buffer(MC_KEEP_MARKDOWN);
    out->frame = mc_take_buffer(MC_KEEP_FRAME);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = mc_compute((const lxb_node *) address, out);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
    }
    return status;
}

static void
mc_output_free(mc_output *out)
{
    mc_give_buffer(MC_KEEP_TEXT, &out->text);
    mc_give_buffer(MC_KEEP_MARKDOWN, &out->markdown);
    mc_give_buffer(MC_KEEP_FRAME, &out->frame);
    free(out->hrefs);
    out->hrefs = NULL;
}

/* The hrefs of `out`'s links, as a list of str. */
static PyObject *
mc_hrefs(const mc_output *out)
{
    PyObject *hrefs = PyList_New(out->href_count);
    for (Py_ssize_t i = 0; hrefs != NULL && i < out->href_count; i++) {
        PyObject *href = mc_str((const char *) out->hrefs[i].data, out->hrefs[i].length);
        if (href == NULL) {
            Py_CLEAR(hrefs);
            break;
        }
        PyList_SET_ITEM(hrefs, i, href);
    }
    return hrefs;
}

static PyObject *
main_parts(PyObject *module, PyObject *number)
{
    mc_output out;
    PyObject *text = NULL, *markdown = NULL, *frame = NULL, *hrefs = NULL, *result = NULL;
    if (mc_run(number, &out) < 0) {
        goto done;
    }
    text = mc_str(out.text.data, out.text.length);
    markdown = mc_str(out.markdown.data, out.markdown.length);
    frame = mc_str(out.frame.data, out.frame.length);
    hrefs = mc_hrefs(&out);
    if (text == NULL || markdown == NULL || frame == NULL || hrefs == NULL) {
        goto done;
    }
    result = out.fallback != NULL
                 ? Py_BuildValue("(OOOsO)", text, markdown, hrefs, out.fallback, frame)
                 : Py_BuildValue("(OOOOO)", text, markdown, hrefs, Py_None, frame);
done:
    Py_XDECREF(text);
    Py_XDECREF(markdown);
    Py_XDECREF(frame);
    Py_XDECREF(hrefs);
    mc_output_free(&out);
    return result;
}

static void
mc_words_free(mc_words *words)
{
    for (size_t i = 0; i < words->count; i++) {
        free(words->words[i]);
    }
    free(words->words);
    free(words->lengths);
    free(words->next);
    memset(words, 0, sizeof *words);
}

/* main_configure(tag_flags, tag_ids, attr_ids, rules, thresholds) */
static PyObject *
main_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "main_configure(tag_flags, tag_ids, attr_ids, rules, thresholds)");
        return NULL;
    }
    MC.ready = false;
    PyObject *flags = args[0], *tags = args[1], *attrs = args[2], *rules = args[3],
             *thresholds = args[4];
    if (!PyDict_Check(flags) || !PyTuple_Check(tags) || PyTuple_GET_SIZE(tags) != MC_TAG_COUNT
        || !PyTuple_Check(attrs) || PyTuple_GET_SIZE(attrs) != MC_ATTR_COUNT
        || !PyTuple_Check(rules) || PyTuple_GET_SIZE(rules) != RULE_COUNT
        || !PyTuple_Check(thresholds) || PyTuple_GET_SIZE(thresholds) != MC_THRESHOLDS) {
        PyErr_SetString(PyExc_ValueError, "main_configure: arguments of the wrong shape");
        return NULL;
    }
    memset(MC.tag_flags, 0, sizeof MC.tag_flags);
    PyObject *key, *value;
    Py_ssize_t position = 0;
    while (PyDict_Next(flags, &position, &key, &value)) {
        size_t tag = PyLong_AsSize_t(key);
        unsigned long tag_flags = PyLong_AsUnsignedLong(value);
        if (PyErr_Occurred()) {
            return NULL;
        }
        if (tag >= TAG_LAST_ENTRY) {
            PyErr_SetString(PyExc_ValueError, "main_configure: a tag id past lexbor's table");
            return NULL;
        }
        MC.tag_flags[tag] = (uint32_t) tag_flags;
    }
    for (Py_ssize_t i = 0; i < MC_TAG_COUNT; i++) {
        MC.tags[i] = PyLong_AsSize_t(PyTuple_GET_ITEM(tags, i));
    }
    for (Py_ssize_t i = 0; i < MC_ATTR_COUNT; i++) {
        MC.attrs[i] = PyLong_AsSize_t(PyTuple_GET_ITEM(attrs, i));
    }
    double *numbers[MC_THRESHOLDS] = {
        &MC.min_page_chars, &MC.min_block_chars, &MC.keep_share, &MC.climb, &MC.sibling_share,
        &MC.sibling_floor, &MC.article_body_bonus, &MC.later_article, &MC.mass_share,
        &MC.named_share, &MC.lead_share, &MC.link_dense, &MC.names_misled,
        &MC.names_misled_chars, &MC.own_text_chars, &MC.scrap_chars, &MC.deepest, &MC.max_links};
    for (Py_ssize_t i = 0; i < MC_THRESHOLDS; i++) {
        *numbers[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(thresholds, i));
    }
    if (PyErr_Occurred()) {
        return NULL;
    }
    for (Py_ssize_t r = 0; r < RULE_COUNT; r++) {
        mc_words *words = &MC.rules[r];
        mc_words_free(words);
        PyObject *list = PyTuple_GET_ITEM(rules, r);
        if (!PyTuple_Check(list)) {
            PyErr_SetString(PyExc_ValueError, "main_configure: rules are tuples of str");
            return NULL;
        }
        Py_ssize_t count = PyTuple_GET_SIZE(list);
        words->words = calloc((size_t) count + 1, sizeof(char *));
        words->lengths = calloc((size_t) count + 1, sizeof(size_t));
        words->next = calloc((size_t) count + 1, sizeof(size_t));
        if (words->words == NULL || words->lengths == NULL || words->next == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_ssize_t length;
            const char *word = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(list, i), &length);
            if (word == NULL) {
                return NULL;
            }
            words->words[i] = malloc((size_t) length + 1);
            if (words->words[i] == NULL) {
                PyErr_NoMemory();
                return NULL;
            }
            memcpy(words->words[i], word, (size_t) length + 1);
            words->lengths[i] = (size_t) length;
            words->count = (size_t) i + 1;
        }
        /* Chains by first byte, each in the words' order; an empty word matches nowhere. */
        for (size_t b = 0; b < 256; b++) {
            words->by_first[b] = words->count;
        }
        for (size_t i = words->count; i-- > 0;) {
            if (words->lengths[i] == 0) {
                words->next[i] = words->count;
                continue;
            }
            unsigned char first = (unsigned char) words->words[i][0];
            words->next[i] = words->by_first[first];
            words->by_first[first] = i;
        }
    }
    MC.ready = true;
    Py_RETURN_NONE;
}

/* The name ids of an element's attributes, in order (for main_configure's attr_ids). */
static PyObject *
attr_name_ids(PyObject *module, PyObject *number)
{
    uintptr_t address;
    if (!address_of(number, &address)) {
        return NULL;
    }
    PyObject *ids = PyList_New(0);
    for (const lxb_attr *attr = ((const lxb_element *) address)->first_attr;
         ids != NULL && attr != NULL; attr = attr->next) {
        uintptr_t qualified = attr->qualified_name != 0 ? attr->qualified_name
                                                        : attr->node.local_name;
        PyObject *id = PyLong_FromSize_t(qualified < ATTR_LAST_ENTRY ? qualified : 0);
        if (id == NULL || PyList_Append(ids, id) < 0) {
            Py_CLEAR(ids);
        }
        Py_XDECREF(id);
    }
    return ids;
}
