/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A strict reader for the JSON of .note.dlopen (no JSON library is a dependency of foyer): one
 * recursive-descent pass over the bytes with a depth limit. What the builder takes from a note
 * decides which libraries go into the image, so anything that is not the documented shape is
 * refused rather than guessed at. */

#include <assert.h>
#include <stdlib.h>

#include "elf-dlopen.h"
#include "parse-util.h"
#include "util.h"

#define JSON_DEPTH_MAX 32

static const char *const priority_table[_DLOPEN_PRIORITY_MAX] = {
        [DLOPEN_REQUIRED] = "required",
        [DLOPEN_RECOMMENDED] = "recommended",
        [DLOPEN_SUGGESTED] = "suggested",
};

const char *dlopen_priority_to_string(DlopenPriority p) {
        return p >= 0 && p < _DLOPEN_PRIORITY_MAX ? priority_table[p] : NULL;
}

typedef struct Parser {
        const char *p, *end;
} Parser;

static void skip_ws(Parser *s) {
        while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
                s->p++;
}

static bool eat(Parser *s, char c) {
        skip_ws(s);
        if (s->p < s->end && *s->p == c) {
                s->p++;
                return true;
        }
        return false;
}

static int hex4(const char *p, unsigned *ret) {
        unsigned v = 0;

        for (int i = 0; i < 4; i++) {
                char c = p[i];

                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= c - '0';
                else if (c >= 'a' && c <= 'f')
                        v |= c - 'a' + 10;
                else if (c >= 'A' && c <= 'F')
                        v |= c - 'A' + 10;
                else
                        return -EBADMSG;
        }
        *ret = v;
        return 0;
}

/* A JSON string; with ret, its value (\u escapes of the BMP as UTF-8, no NUL, no surrogates). */
static int parse_string(Parser *s, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t n = 0;

        if (!eat(s, '"'))
                return -EBADMSG;
        if (ret) {
                /* The value is never longer than its encoding. */
                buf = malloc(s->end - s->p + 1);
                if (!buf)
                        return -ENOMEM;
        }
        while (s->p < s->end) {
                unsigned char c = *s->p++;
                unsigned u;

                if (c == '"') {
                        if (ret) {
                                buf[n] = 0;
                                *ret = TAKE_PTR(buf);
                        }
                        return 0;
                }
                if (c < 0x20)
                        return -EBADMSG;
                if (c != '\\') {
                        if (buf)
                                buf[n++] = c;
                        continue;
                }
                if (s->p >= s->end)
                        return -EBADMSG;
                c = *s->p++;
                switch (c) {
                case '"': case '\\': case '/':
                        break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'n': c = '\n'; break;
                case 'r': c = '\r'; break;
                case 't': c = '\t'; break;
                case 'u':
                        if (s->end - s->p < 4 || hex4(s->p, &u) < 0)
                                return -EBADMSG;
                        s->p += 4;
                        if (u == 0 || (u >= 0xd800 && u <= 0xdfff))
                                return -EBADMSG;
                        if (!buf)
                                continue;
                        if (u < 0x80)
                                buf[n++] = u;
                        else if (u < 0x800) {
                                buf[n++] = 0xc0 | (u >> 6);
                                buf[n++] = 0x80 | (u & 0x3f);
                        } else {
                                buf[n++] = 0xe0 | (u >> 12);
                                buf[n++] = 0x80 | ((u >> 6) & 0x3f);
                                buf[n++] = 0x80 | (u & 0x3f);
                        }
                        continue;
                default:
                        return -EBADMSG;
                }
                if (buf)
                        buf[n++] = c;
        }
        return -EBADMSG;
}

static int skip_value(Parser *s, unsigned depth);

static int skip_number(Parser *s) {
        const char *start;

        skip_ws(s);
        start = s->p;
        if (s->p < s->end && *s->p == '-')
                s->p++;
        if (s->p >= s->end || *s->p < '0' || *s->p > '9')
                return -EBADMSG;
        if (*s->p == '0')
                s->p++;
        else
                while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
                        s->p++;
        if (s->p < s->end && *s->p == '.') {
                s->p++;
                if (s->p >= s->end || *s->p < '0' || *s->p > '9')
                        return -EBADMSG;
                while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
                        s->p++;
        }
        if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
                s->p++;
                if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
                        s->p++;
                if (s->p >= s->end || *s->p < '0' || *s->p > '9')
                        return -EBADMSG;
                while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
                        s->p++;
        }
        return s->p > start ? 0 : -EBADMSG;
}

static int skip_literal(Parser *s, const char *word) {
        size_t l = strlen(word);

        skip_ws(s);
        if ((size_t) (s->end - s->p) < l || memcmp(s->p, word, l) != 0)
                return -EBADMSG;
        s->p += l;
        return 0;
}

/* Any JSON value, checked and dropped: the spec lets notes carry keys we do not know. */
static int skip_value(Parser *s, unsigned depth) {
        int r;

        if (depth > JSON_DEPTH_MAX)
                return -EBADMSG;
        skip_ws(s);
        if (s->p >= s->end)
                return -EBADMSG;
        switch (*s->p) {
        case '"':
                return parse_string(s, NULL);
        case '[':
                s->p++;
                if (eat(s, ']'))
                        return 0;
                do {
                        r = skip_value(s, depth + 1);
                        if (r < 0)
                                return r;
                } while (eat(s, ','));
                return eat(s, ']') ? 0 : -EBADMSG;
        case '{':
                s->p++;
                if (eat(s, '}'))
                        return 0;
                do {
                        r = parse_string(s, NULL);
                        if (r < 0)
                                return r;
                        if (!eat(s, ':'))
                                return -EBADMSG;
                        r = skip_value(s, depth + 1);
                        if (r < 0)
                                return r;
                } while (eat(s, ','));
                return eat(s, '}') ? 0 : -EBADMSG;
        case 't':
                return skip_literal(s, "true");
        case 'f':
                return skip_literal(s, "false");
        case 'n':
                return skip_literal(s, "null");
        default:
                return skip_number(s);
        }
}

static bool soname_is_valid(const char *name) {
        return !isempty(name) && !strchr(name, '/') && !streq(name, ".") && !streq(name, "..") &&
               !string_has_cc(name);
}

/* "soname": one string, or a non-empty array of them (systemd's macro writes an array). */
static int parse_sonames(Parser *s, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        bool array;
        int r;

        skip_ws(s);
        array = eat(s, '[');
        do {
                char *name = NULL;

                r = parse_string(s, &name);
                if (r < 0)
                        return r;
                if (!soname_is_valid(name)) {
                        free(name);
                        return -EBADMSG;
                }
                r = strv_consume(&l, name);
                if (r < 0)
                        return r;
        } while (array && eat(s, ','));
        if (array && !eat(s, ']'))
                return -EBADMSG;
        *ret = TAKE_PTR(l);
        return 0;
}

static void feature_done(DlopenFeature *f) {
        free(f->feature);
        strv_free(f->sonames);
        *f = (DlopenFeature) {};
}

static int parse_feature(Parser *s, DlopenFeature *ret) {
        DlopenFeature f = { .priority = DLOPEN_RECOMMENDED };
        bool have_priority = false;
        int r;

        if (!eat(s, '{'))
                return -EBADMSG;
        if (eat(s, '}'))
                return -EBADMSG;        /* "soname" is mandatory */
        do {
                _cleanup_free_ char *key = NULL;

                r = parse_string(s, &key);
                if (r < 0)
                        goto fail;
                r = -EBADMSG;
                if (!eat(s, ':'))
                        goto fail;
                if (streq(key, "soname")) {
                        if (f.sonames)
                                goto fail;
                        r = parse_sonames(s, &f.sonames);
                } else if (streq(key, "feature")) {
                        if (f.feature)
                                goto fail;
                        r = parse_string(s, &f.feature);
                } else if (streq(key, "description")) {
                        r = parse_string(s, NULL);
                } else if (streq(key, "priority")) {
                        _cleanup_free_ char *v = NULL;

                        if (have_priority)
                                goto fail;
                        r = parse_string(s, &v);
                        if (r < 0)
                                goto fail;
                        r = -EBADMSG;
                        for (DlopenPriority p = 0; p < _DLOPEN_PRIORITY_MAX; p++)
                                if (streq(v, priority_table[p])) {
                                        f.priority = p;
                                        r = 0;
                                }
                        have_priority = true;
                } else
                        r = skip_value(s, 1);
                if (r < 0)
                        goto fail;
        } while (eat(s, ','));
        r = -EBADMSG;
        if (!eat(s, '}') || !f.sonames)
                goto fail;
        *ret = f;
        return 0;
fail:
        feature_done(&f);
        return r;
}

void dlopen_features_free(DlopenFeature *features, size_t n) {
        for (size_t i = 0; i < n; i++)
                feature_done(&features[i]);
        free(features);
}

static int features_append(DlopenFeature **features, size_t *n, DlopenFeature *add, size_t n_add) {
        DlopenFeature *t;

        if (n_add == 0)
                return 0;
        t = reallocarray(*features, *n + n_add, sizeof(DlopenFeature));
        if (!t)
                return -ENOMEM;
        memcpy(t + *n, add, n_add * sizeof(DlopenFeature));
        *features = t;
        *n += n_add;
        return 0;
}

int dlopen_note_parse(const char *json, size_t len, DlopenFeature **features, size_t *n) {
        Parser s = { .p = json, .end = json + len };
        DlopenFeature *parsed = NULL;
        size_t n_parsed = 0;
        int r;

        assert(json || len == 0);
        assert(features);
        assert(n);

        /* The descriptor is the string with its NUL, padded to the note's alignment. */
        while (s.end > s.p && s.end[-1] == 0)
                s.end--;
        if (memchr(s.p, 0, s.end - s.p))
                return -EBADMSG;

        /* The spec's first form is one object per note; systemd's macro writes an array of them. */
        skip_ws(&s);
        if (s.p < s.end && *s.p == '{') {
                DlopenFeature f;

                r = parse_feature(&s, &f);
                if (r < 0)
                        goto fail;
                parsed = calloc(1, sizeof(DlopenFeature));
                if (!parsed) {
                        feature_done(&f);
                        r = -ENOMEM;
                        goto fail;
                }
                parsed[n_parsed++] = f;
        } else if (!eat(&s, '[')) {
                r = -EBADMSG;
                goto fail;
        } else if (!eat(&s, ']')) {
                do {
                        DlopenFeature f, *t;

                        r = parse_feature(&s, &f);
                        if (r < 0)
                                goto fail;
                        t = reallocarray(parsed, n_parsed + 1, sizeof(DlopenFeature));
                        if (!t) {
                                feature_done(&f);
                                r = -ENOMEM;
                                goto fail;
                        }
                        parsed = t;
                        parsed[n_parsed++] = f;
                } while (eat(&s, ','));
                r = -EBADMSG;
                if (!eat(&s, ']'))
                        goto fail;
        }
        skip_ws(&s);
        r = -EBADMSG;
        if (s.p != s.end)
                goto fail;

        r = features_append(features, n, parsed, n_parsed);
        if (r < 0)
                goto fail;
        free(parsed);
        return 0;
fail:
        dlopen_features_free(parsed, n_parsed);
        return r;
}

/* What libsystemd-shared of systemd 252 to 255 dlopen()s that foyer's initrd uses (unlocking LUKS,
 * with a TPM2 when the tree has tpm2-tss; compressed journal files), by the names those versions
 * ask for. FIDO2 and PKCS#11 tokens (libfido2, libp11-kit) are left out: plan-tokens.c adds them
 * with what else unlocking with them needs. The one place this list is kept: from 256 on, the
 * library's own notes say it. */
static const struct {
        const char *feature;
        DlopenPriority priority;
        const char *soname;
} legacy[] = {
        { "cryptsetup", DLOPEN_SUGGESTED,   "libcryptsetup.so.12" },
        { "tpm",        DLOPEN_SUGGESTED,   "libtss2-esys.so.0" },
        { "tpm",        DLOPEN_SUGGESTED,   "libtss2-rc.so.0" },
        { "tpm",        DLOPEN_SUGGESTED,   "libtss2-mu.so.0" },
        { "lz4",        DLOPEN_RECOMMENDED, "liblz4.so.1" },
        { "zstd",       DLOPEN_RECOMMENDED, "libzstd.so.1" },
        { "lzma",       DLOPEN_RECOMMENDED, "liblzma.so.5" },
};

int dlopen_legacy_features(const char *filename, DlopenFeature **features, size_t *n) {
        const char *v = startswith(filename, "libsystemd-shared-");
        _cleanup_free_ char *num = NULL;
        DlopenFeature *add;
        unsigned version;
        const char *dot;
        size_t k = 0;
        int r;

        if (!v || !(dot = strstr(v, ".so")))
                return 0;
        num = strndup(v, dot - v);
        if (!num)
                return -ENOMEM;
        /* Debian's "libsystemd-shared-252.so"; some distributions add "-1.fc38" and the like. */
        num[strspn(num, "0123456789")] = 0;
        if (safe_atou(num, &version) < 0 || version >= 256)
                return 0;

        add = calloc(ELEMENTSOF(legacy), sizeof(DlopenFeature));
        if (!add)
                return -ENOMEM;
        for (; k < ELEMENTSOF(legacy); k++) {
                add[k].priority = legacy[k].priority;
                add[k].feature = strdup(legacy[k].feature);
                r = add[k].feature ? strv_extend(&add[k].sonames, legacy[k].soname) : -ENOMEM;
                if (r < 0) {
                        dlopen_features_free(add, k + 1);
                        return -ENOMEM;
                }
        }
        r = features_append(features, n, add, k);
        if (r < 0) {
                dlopen_features_free(add, k);
                return r;
        }
        free(add);
        return (int) k;
}
