"""What the *_subset.py scripts share: reading labelled pair files, and
writing the subsets they choose (one JSONL file per subset under a directory,
each written to a temporary name and renamed, then their pair counts as one
JSON object on stdout)."""
import json
import os
import re
import sys
import unicodedata

APOSTROPHES = re.compile("['\u2019\u2018`\u00b4\u02bc]")
PUNCTUATION = re.compile('[.,;:!?"\u201c\u201d\u201e\u00ab\u00bb()\\[\\]{}\\\\\u2026\u2022\u00b7\u2010-\u2015-]')


def surface_words(text, fold_case=True):
    """The words of a word-level reading of text::surface_text: NFKC (with
    case folding unless fold_case is False), apostrophes dropped, sentence
    punctuation read as a space."""
    text = unicodedata.normalize("NFKC", text)
    if fold_case:
        text = text.casefold()
    return PUNCTUATION.sub(" ", APOSTROPHES.sub("", text)).split()


def changed_words(a, b):
    """The positions at which the texts' surface words differ, or None where
    they hold different numbers of words."""
    wa, wb = surface_words(a), surface_words(b)
    if len(wa) != len(wb):
        return None
    return [i for i in range(len(wa)) if wa[i] != wb[i]], wa, wb


def one_word_changed(a, b):
    """(word of a, word of b) when the texts are the same on the surface but
    for one word, else None."""
    changed = changed_words(a, b)
    if changed is None or len(changed[0]) != 1:
        return None
    diff, wa, wb = changed
    return wa[diff[0]], wb[diff[0]]


def labelled_pairs(paths):
    """Yields {"a", "b", "label", "source"} for every line of the files; a
    pair without a source gets its file's directory name ("qqp" for
    data/pairs/qqp/dev.jsonl). A bad line ends the program, naming the file
    and line."""
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                try:
                    pair = json.loads(line)
                    a, b, label = pair["a"], pair["b"], int(pair["label"])
                except (ValueError, KeyError, TypeError) as e:
                    sys.exit(f"{path}:{n}: not a labelled pair ({e})")
                source = pair.get("source") or os.path.basename(os.path.dirname(path)) or path
                yield {"a": a, "b": b, "label": label, "source": source}


def write_subsets(out_dir, subsets):
    os.makedirs(out_dir, exist_ok=True)
    for subset, pairs in subsets.items():
        path = os.path.join(out_dir, subset + ".jsonl")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            for pair in pairs:
                f.write(json.dumps(pair, ensure_ascii=False) + "\n")
        os.replace(path + ".tmp", path)
    print(json.dumps({subset: len(pairs) for subset, pairs in subsets.items()}))
