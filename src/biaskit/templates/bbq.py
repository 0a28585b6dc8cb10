"""BBQ rebuilt from its own templates (Parrish et al., Findings of ACL 2022): ``biaskit expand bbq``.

Each template row is filled with pairs of people (``{{NAME1}}``, ``{{NAME2}}``; ``{{GEN1}}``/``{{OCC1}}`` in the
intersectional categories) and words (``{{WORD1}}``, ``{{WORD2}}``), and every filled pair gives 4 examples:
{ambiguous, disambiguated context} x {negative, non-negative question}, with the two people and one "unknown"
phrasing as the three options in shuffled order. Which pairs are drawn follows the rules of BBQ's generator
(the facts that fix the counts, written down in docs/bbq.md): at most 5 target words per row, the second
person from the non-target words, both orders for the categories whose NAME1 is the target, proper names
for ``Proper_nouns_only`` rows, and 6 pairings (3 contrasts x 2 orders) in the intersectional categories.
The counts therefore equal the published files (58,492 in all); the draws are seeded (``seed``), so a
rebuild is reproducible, while the published texts, drawn without a seed, cannot be matched word for word.

Articles in front of a slot follow :func:`biaskit.templates.articles.indefinite_article` (by sound), not the
generator's vowel-letter rule.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.io import write_table
from biaskit.manifest import new_manifest
from biaskit.templates.articles import indefinite_article
from biaskit.templates.bbq_agree import GENDER_ALIASES, MARKER, declared_gender, render_agreement, word_gender
from biaskit.templates.bbq_data import INTERSECTIONAL, UNKNOWN_OPTIONS, BBQData, Template, load_bbq

#: categories whose NAME1 is drawn from the stereotyped groups (the generator's "need_stereotyping_subset")
TARGET_FIRST = ("Race_ethnicity", "Religion", "Nationality", "Sexual_orientation")
_FILL = re.compile(r"(\b[Aa]n?\s+)?\{\{(NAME[12]|WORD[12]|GEN[12]|OCC[12])\}\}")
_FIXES = (("lesbian man", "lesbian woman"), ("Latino woman", "Latina woman"))


@dataclass
class Person:
    """One of the two people of a pair: the slot fills that name them, the answer text and their group."""

    name: str
    info: str
    extra: str | None = None  # GEN/OCC word of the intersectional categories
    gender: str | None = None  # grammatical gender (m/f/n) where known: the agreement of translations (bbq_agree)

    @property
    def text(self) -> str:
        return f"{self.name} {self.extra}" if self.extra else self.name


@dataclass
class Pair:
    first: Person
    second: Person
    target: int | None  # 0: first is the targeted group, 1: second, None: decided from the groups
    subcategory: str
    words: dict[str, str] = field(default_factory=dict)


def _unique(values) -> list[str]:
    return list(dict.fromkeys(values))


def _sample(rng: random.Random, items: list[str], n: int, t: Template) -> list[str]:
    if len(items) < n:
        raise BiaskitError(
            "E412",
            f"{t.where}: the vocabulary has {len(items)} candidates where {n} are drawn",
            value=items,
            fix="add words or names to the vocabulary for this template",
        )
    return rng.sample(items, n)


def _fill(text: str, values: dict[str, str], genders: dict[str, str | None] | None = None, where: str = "") -> str:
    if MARKER.search(text):
        text = render_agreement(text, genders or {}, where)

    def sub(m: re.Match) -> str:
        value = values.get(m.group(2), "")
        art = m.group(1)
        if art is None or not value:
            return (art or "") + value
        new = indefinite_article(value)
        new = new.capitalize() if art[0].isupper() else new
        return new + art[len(art.rstrip()) :] + value

    out = _FILL.sub(sub, text)
    for wrong, right in _FIXES:
        out = out.replace(wrong, right)
    return out


def _words(t: Template, rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(v) for k, v in t.words.items()}


class _Plain:
    """Pairs of the 9 single-axis categories."""

    def __init__(self, data: BBQData, rng: random.Random) -> None:
        self.data, self.rng = data, rng
        self.first_names = [r for r in data.names if r.get("First_last") == "first"]
        self.first_only = [r for r in data.names if r.get("First_last") == "first_only"]

    def _info(self, name: str) -> str:
        return next((r.get("Info", "") for r in self.data.vocab if r.get("Name") == name), "")

    def pairs(self, t: Template) -> list[Pair]:
        """The generator's pairing rules for one row (see the module docstring and docs/bbq.md)."""
        cat, rng = t.category, self.rng
        words = [r for r in self.data.vocab if r.get("Category") == cat]
        possible = _unique(r.get("Name", "") for r in words)
        target_first = cat in TARGET_FIRST
        raw_groups = t.get("Known_stereotyped_groups")
        targeted = [x for x in possible if x in t.groups] if len(raw_groups) > 1 and target_first else possible
        word_list = rng.sample(targeted, 5) if len(targeted) > 4 else ([] if len(possible) < 2 else list(targeted))
        subcat = t.get("Subcategory")
        if len(subcat) > 1:
            words = [r for r in words if r.get("SubCat") == subcat]
            word_list = _unique(r.get("Name", "") for r in words)
            word_list = rng.sample(word_list, 5) if len(word_list) > 5 else word_list
        else:
            subcat = "None"
        second_fixed: list[str] | None = None
        if t.names:
            word_list, second_fixed = list(t.names["NAME1"]), list(t.names.get("NAME2", []))
        first: list[dict[str, str]] = []
        if t.proper_names:
            if cat == "Race_ethnicity":
                first = [r for r in self.first_names if not t.groups or r.get("ethnicity") in t.groups]
                word_list = _sample(rng, [r["Name"] for r in first], 5, t)
            elif cat == "Gender_identity":
                first = self.first_only
                word_list = _sample(rng, [r["Name"] for r in first if r.get("gender") == "F"], 5, t)
            else:
                first = self.first_only
                word_list = _sample(rng, [r["Name"] for r in first], 6, t)
        out: list[Pair] = []
        both_orders = target_first or t.proper_names or (cat == "SES" and subcat == "Occupation")
        # NAME1 is drawn from the stereotyped groups (the vocabulary's, or Race_ethnicity's proper names)
        drawn_target = target_first and bool(t.groups) and not t.names and (not t.proper_names or cat == "Race_ethnicity")
        for word in word_list:
            person, seconds = self._seconds(t, word, word_list, possible, words, first, second_fixed)
            for other in seconds:
                target = 0 if drawn_target else None
                pair = Pair(person, other, target, subcat, _words(t, rng))
                self._infos(t, pair, subcat)
                out.append(pair)
                if both_orders:
                    out.append(Pair(pair.second, pair.first, None if target is None else 1, subcat, pair.words))
        return out

    def _seconds(self, t, word, word_list, possible, words, first, second_fixed) -> tuple[Person, list[Person]]:
        cat, rng = t.category, self.rng
        if second_fixed is not None:
            return Person(word, word), [Person(w, w) for w in second_fixed]
        if t.groups and cat in TARGET_FIRST:
            seconds = [n for n in possible if n not in t.groups]
            seconds = rng.sample(seconds, 5) if len(seconds) > 4 else seconds
        else:
            seconds = [n for n in word_list if n != word]
        if cat == "SES" and not t.proper_names:
            level = next(r.get("Info", "") for r in words if r.get("Name") == word)
            seconds = _unique(r.get("Name", "") for r in words if r.get("Info") != level)
        by_name = {r["Name"]: r for r in first}
        if cat == "Gender_identity" and t.proper_names:
            gender = by_name[word].get("gender", "")
            pool = _unique(r["Name"] for r in first if r.get("gender") != gender)
            others = [Person(n, by_name[n].get("gender", ""), gender=declared_gender(by_name[n])) for n in _sample(rng, pool, 5, t)]
            return Person(word, gender, gender=declared_gender(by_name[word])), others
        if cat == "Race_ethnicity" and t.proper_names:
            gender, eth = by_name[word].get("gender", ""), by_name[word].get("ethnicity", "")
            person = Person(f"{word} {self._last(eth, t)}", f"{gender}-{eth}", gender=declared_gender(by_name[word]))
            candidates = [r for r in self.first_names if r.get("ethnicity") not in t.groups and r.get("gender") == gender]
            if len(candidates) < 5:
                _sample(rng, [r["Name"] for r in candidates], 5, t)  # raises E412 naming the row
            chosen = rng.sample(candidates, 5)
            others = [
                Person(f"{r['Name']} {self._last(r.get('ethnicity', ''), t)}", f"{r.get('gender')}-{r.get('ethnicity')}", gender=declared_gender(r))
                for r in chosen
            ]
            return person, others
        gender = {r.get("Name", ""): word_gender(r) for r in words}
        gender.update({r["Name"]: declared_gender(r) for r in first})  # proper names (first is empty otherwise)
        return Person(word, word, gender=gender.get(word)), [Person(n, n, gender=gender.get(n)) for n in seconds]

    def _last(self, ethnicity: str, t: Template) -> str:
        names = _unique(r["Name"] for r in self.data.names if r.get("First_last") == "last" and r.get("ethnicity") == ethnicity)
        return _sample(self.rng, names, 1, t)[0]

    def _infos(self, t: Template, pair: Pair, subcat: str) -> None:
        """The group of each person, as the generator records it in answer_info."""
        cat, a, b = t.category, pair.first, pair.second
        if t.proper_names and cat == "Race_ethnicity":
            return
        if cat == "Gender_identity" and t.proper_names:
            if t.get("NAME1_info"):
                a.info, b.info = f"{t.get('NAME1_info')}_{a.info}", f"{t.get('NAME2_info')}_{b.info}"
        elif cat == "Nationality" or (cat == "SES" and subcat == "Occupation"):
            a.info, b.info = self._info(a.name), self._info(b.name)
        elif t.get("NAME1_info"):
            a.info, b.info = t.get("NAME1_info"), t.get("NAME2_info")


class _Crossed:
    """Pairs of Race_x_SES and Race_x_gender: per target word and second race, three contrasts
    (a: same race, other gender/SES; b: other race, same gender/SES; c: both other), each in both orders."""

    def __init__(self, data: BBQData, rng: random.Random) -> None:
        self.data, self.rng = data, rng
        self.first_names = [r for r in data.names if r.get("First_last") == "first"]

    def pairs(self, t: Template) -> list[Pair]:
        rng, cat = self.rng, t.category
        possible = _unique(r.get("Name", "") for r in self.data.vocab if r.get("Category") == "Race_ethnicity")
        targeted = [x for x in possible if x in t.groups] if t.groups else possible
        word_list = rng.sample(targeted, 5) if len(targeted) > 4 else targeted
        tv2 = t.get("Known_stereotyped_var2")
        other_v2 = {"M": "F", "F": "M", "lowSES": "highSES", "highSES": "lowSES"}.get(tv2, "")
        first = [r for r in self.first_names if r.get("ethnicity") in t.groups]
        if t.proper_names:
            if cat == "Race_x_gender":
                first = [r for r in first if r.get("gender") == tv2]
            elif t.get("Stated_gender_info"):
                first = [r for r in first if r.get("gender") == t.get("Stated_gender_info")]
            word_list = _sample(rng, [r["Name"] for r in first], 5, t)
        by_name = {r["Name"]: r for r in self.first_names}
        out: list[Pair] = []
        for word in word_list:
            races = _sample(rng, [n for n in possible if n not in word_list], 5, t)
            if t.proper_names:
                out += self._named(t, by_name[word], tv2, other_v2)
                continue
            for race in races:
                v2_words = self._var2(t, tv2)
                out += self._both_orders(t, *_crossed((tv2, other_v2), v2_words, (word, word), (word, word), (race, race)))
        return out

    def _var2(self, t: Template, tv2: str) -> tuple[str | None, str | None]:
        """The gender/SES words of the target and of the other person (from Names, else the SES vocabulary)."""
        if t.names:
            pair = t.names["pair"]
            loc = t.var2_info.index(tv2)
            picked = [self.rng.choice(p) if isinstance(p, list) else p for p in (pair[loc], pair[1 - loc])]
            return picked[0], picked[1]
        if t.category == "Race_x_gender":
            return None, None
        ses = [r for r in self.data.vocab if r.get("Category") == "SES"]
        same = _unique(r["Name"] for r in ses if r.get("Info") == tv2)
        other = _unique(r["Name"] for r in ses if r.get("Info") != tv2)
        return _sample(self.rng, same, 1, t)[0], _sample(self.rng, other, 1, t)[0]

    def _named(self, t: Template, row: dict[str, str], tv2: str, other_v2: str) -> list[Pair]:
        rng, gender, eth = self.rng, row.get("gender", ""), row.get("ethnicity", "")

        def pick(rows: list[dict[str, str]]) -> list[dict[str, str]]:
            if len(rows) < 5:
                _sample(rng, [r["Name"] for r in rows], 5, t)  # raises E412 naming the row
            return rng.sample(rows, 5)

        def named(r: dict[str, str]) -> tuple[str, str]:
            lasts = _unique(x["Name"] for x in self.data.names if x.get("First_last") == "last" and x.get("ethnicity") == r.get("ethnicity"))
            return f"{r['Name']} {_sample(rng, lasts, 1, t)[0]}", f"{r.get('gender')}-{r.get('ethnicity')}"

        full, info1 = named(row)
        full_ = self.first_names
        out: list[Pair] = []
        if t.category == "Race_x_SES":
            diff = pick([r for r in full_ if r.get("ethnicity") not in t.groups and r.get("gender") == gender])
            same = pick([r for r in full_ if r.get("ethnicity") == eth and r.get("gender") == gender and r["Name"] != row["Name"]])
            for s_row, d_row in zip(same, diff, strict=True):
                v2_words = self._var2(t, tv2)  # drawn before the two names are: the order of the random draws
                out += self._both_orders(t, *_crossed((tv2, other_v2), v2_words, (full, info1), named(s_row), named(d_row)))
            return out
        a = pick([r for r in full_ if r.get("ethnicity") == eth and r.get("gender") != gender])
        b = pick([r for r in full_ if r.get("ethnicity") != eth and r.get("gender") == gender])
        c = pick([r for r in full_ if r.get("ethnicity") != eth and r.get("gender") != gender])
        for ra, rb, rc in zip(a, b, c, strict=True):
            one = Person(full, info1)
            contrasts = {k: Person(*named(r)) for k, r in (("a", ra), ("b", rb), ("c", rc))}
            out += self._both_orders(t, one, contrasts)
        return out

    def _both_orders(self, t: Template, one: Person, contrasts: dict[str, Person]) -> list[Pair]:
        words = _words(t, self.rng)
        fwd = [Pair(one, p, 0, f"intersectional_{k}", words) for k, p in contrasts.items()]
        return fwd + [Pair(p, one, 1, f"intersectional_{k}", words) for k, p in contrasts.items()]


def _crossed(
    v2: tuple[str, str], words: tuple[str | None, str | None], target: tuple[str, str], same: tuple[str, str], other: tuple[str, str]
) -> tuple[Person, dict[str, Person]]:
    """The target person of a crossed (race x gender or SES) template and its three contrasts: ``a`` a person of the
    target's group (``same``) with the other gender/SES value, ``b`` one of another group (``other``) with the target's
    value, ``c`` one of another group with the other value. ``v2`` holds the target's and the other gender/SES value,
    ``words`` their words (:meth:`_var2`); each person is a (name, group) pair."""
    (tv2, other_v2), (w_t, w_o) = v2, words
    one = Person(target[0], f"{tv2}-{target[1]}", w_t)
    return one, {
        "a": Person(same[0], f"{other_v2}-{same[1]}", w_o),
        "b": Person(other[0], f"{tv2}-{other[1]}", w_t),
        "c": Person(other[0], f"{other_v2}-{other[1]}", w_o),
    }


def _norm(s: str) -> str:
    return re.sub(r"[\s_\-]", "", s.lower())


def group_matches(info: str, groups: list[str], *, parts: bool = False) -> bool:
    """True when the answer group ``info`` (``old``, ``lowSES``, ``woman``) is one of ``groups`` (case, spaces,
    hyphens ignored; ``F``/``M`` also match woman/girl, man/boy); ``parts=True`` also tries the parts of a
    composite group (``F-Black``, ``lowSES-Hispanic``)."""
    cands = {_norm(info)} | ({_norm(p) for p in re.split(r"[-_]", info) if p} if parts else set())
    for g in groups:
        ng = _norm(g)
        if ng in cands or cands & GENDER_ALIASES.get(ng, set()):
            return True
    return False


def target_option(infos: list[tuple[int, list[str]]], groups: list[str]) -> int | None:
    """The option whose person belongs to a stereotyped group: ``infos`` holds (option, [group, text, ...]) of
    the two people; whole groups first, then their parts; None unless exactly one person matches."""
    for parts in (False, True):
        hits = [i for i, values in infos if any(group_matches(v, groups, parts=parts) for v in values)]
        if len(hits) == 1:
            return hits[0]
    return None


def _target_loc(pair: Pair, order: list[int], groups: list[str]) -> int | None:
    """Option index of the targeted person: known from the draw, else the one person whose group is stereotyped."""
    if pair.target is not None:
        return order.index(pair.target)
    hit = target_option([(0, [pair.first.info]), (1, [pair.second.info])], groups)
    return None if hit is None else order.index(hit)


def _answer_slot(t: Template, column: str) -> int:
    text = t.get(column)
    m = re.search(r"\{\{NAME([12])\}\}", text)
    if not m:
        raise BiaskitError(
            "E410", f"{t.where}: {column} names neither {{{{NAME1}}}} nor {{{{NAME2}}}}", value=text, fix="an answer names one of the two people"
        )
    return int(m.group(1)) - 1


def examples_for_pair(t: Template, pair: Pair, rng: random.Random, first_id: int) -> list[dict]:
    """The 4 examples of one filled pair: ambiguous/disambiguated x negative/non-negative."""
    people = (pair.first, pair.second)
    values = {"NAME1": pair.first.name, "NAME2": pair.second.name, **pair.words}
    genders = {"NAME1": pair.first.gender, "NAME2": pair.second.gender}
    for i, p in enumerate(people, start=1):
        if p.extra is not None:
            values[f"GEN{i}"] = values[f"OCC{i}"] = p.extra
    neg, nonneg = _answer_slot(t, "Answer_negative"), _answer_slot(t, "Answer_non_negative")
    unknown = rng.choice(UNKNOWN_OPTIONS)
    order: list[int] = [neg, nonneg, 2]  # person index per option, 2 = unknown
    rng.shuffle(order)
    answers = [unknown if o == 2 else _fill(t.get("Answer_negative" if o == neg else "Answer_non_negative"), values, genders, t.where) for o in order]
    if neg == nonneg:  # both answers name the same slot: the options are the two people, as the template means
        answers = [unknown if o == 2 else _fill(f"The {{{{NAME{o + 1}}}}}", values) for o in order]
    info = {f"ans{i}": ([unknown, "unknown"] if o == 2 else [people[o].text, people[o].info]) for i, o in enumerate(order)}
    ambig = _fill(t.get("Ambiguous_Context"), values, genders, t.where).strip()
    disambig = f"{ambig} {_fill(t.get('Disambiguating_Context'), values, genders, t.where).strip()}"
    target = _target_loc(pair, order, t.groups)
    common = {
        "category": t.category,
        "question_index": t.get("Q_id"),
        "ans0": answers[0],
        "ans1": answers[1],
        "ans2": answers[2],
        "answer_info": json.dumps(info, ensure_ascii=False),
        "stereotyped_groups": json.dumps(t.groups, ensure_ascii=False),
        "stereotyped_var2": t.get("Known_stereotyped_var2") or None,
        "target_loc": target,
        "label_type": "name" if t.proper_names else "label",
        "subcategory": pair.subcategory,
        "version": t.get("version") or "None",
        "source": t.get("Notes"),
        "template_row": t.source_row,
    }
    rows = []
    for n, (polarity, cond, question, label) in enumerate(
        (
            ("neg", "ambig", "Question_negative_stereotype", order.index(2)),
            ("neg", "disambig", "Question_negative_stereotype", order.index(neg)),
            ("nonneg", "ambig", "Question_non_negative", order.index(2)),
            ("nonneg", "disambig", "Question_non_negative", order.index(nonneg)),
        )
    ):
        rows.append(
            {
                "example_id": first_id + n,
                **common,
                "question_polarity": polarity,
                "context_condition": cond,
                "context": ambig if cond == "ambig" else disambig,
                "question": _fill(t.get(question), values, genders, t.where).strip(),
                "label": label,
            }
        )
    return rows


COLUMNS = (
    ("example_id", pa.int64()),
    ("category", pa.string()),
    ("question_index", pa.string()),
    ("question_polarity", pa.string()),
    ("context_condition", pa.string()),
    ("context", pa.string()),
    ("question", pa.string()),
    ("ans0", pa.string()),
    ("ans1", pa.string()),
    ("ans2", pa.string()),
    ("answer_info", pa.string()),
    ("stereotyped_groups", pa.string()),
    ("stereotyped_var2", pa.string()),
    ("label", pa.int64()),
    ("target_loc", pa.int64()),
    ("label_type", pa.string()),
    ("subcategory", pa.string()),
    ("version", pa.string()),
    ("source", pa.string()),
    ("template_row", pa.int64()),
)


def expand_bbq(data: BBQData | str | Path | None = None, *, seed: int = 0, categories: list[str] | None = None) -> pa.Table:
    """Every example of ``categories`` (default: all in ``data``), seeded; one random stream per category,
    so a category's examples do not depend on which others are expanded."""
    if not isinstance(data, BBQData):
        data = load_bbq(data, categories)
    rows: list[dict] = []
    for cat, templates in data.templates.items():
        if categories and cat not in categories:
            continue
        rng = random.Random(f"bbq:{seed}:{cat}")
        maker = _Crossed(data, rng) if cat in INTERSECTIONAL else _Plain(data, rng)
        n = 0
        for t in templates:
            for pair in maker.pairs(t):
                rows += examples_for_pair(t, pair, rng, n)
                n += 4
    schema = pa.schema(COLUMNS)
    return pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()


def write_expansion(
    out: str | Path, templates_dir: str | Path | None = None, *, seed: int = 0, categories: list[str] | None = None, strict: bool = False
) -> tuple[pa.Table, BBQData]:
    """Read the templates, expand them and write the examples atomically with a manifest (``biaskit expand bbq``)."""
    data = load_bbq(templates_dir, categories, strict=strict)
    table = expand_bbq(data, seed=seed)
    config = {"templates_dir": str(templates_dir or "bundled"), "categories": sorted(data.templates), "strict": strict, "notes": data.notes}
    write_table(table, out, manifest=new_manifest("biaskit expand bbq", stage="bbq", seed=seed, inputs=data.sources, config=config))
    return table, data
