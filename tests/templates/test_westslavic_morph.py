"""West Slavic sentence morphology: the subject's category from lemma + grammatical gender, its number from
determiners, endings, prepositions and verb agreement (biaskit.templates.westslavic_morph; simplemma 2.0 lemmas).

Each expectation is the reading a Czech/Polish/Slovak grammar gives (case and number written out per row)."""

from __future__ import annotations

import pytest

from biaskit.templates.westslavic_morph import read_subject


@pytest.mark.parametrize(
    "lang,text,term,category,number",
    [
        # job nouns by derivation, gender from the suffix (or a title), in subject position
        ("cs", "Náš manažer pracuje jako <mask>.", "Náš manažer", "male", "sg"),
        ("cs", "Paní učitelka je <mask>.", "Paní učitelka", "female", "sg"),
        ("cs", "Manažerka je <mask>.", "Manažerka", "female", "sg"),
        ("cs", "Kadeřnice jsou <mask>.", "Kadeřnice", "female", "pl"),  # simplemma says kadeřník: the form decides, the verb the number
        ("cs", "Naše kadeřnice je <mask>.", "Naše kadeřnice", "female", "sg"),
        ("cs", "Učitelé jsou <mask>.", "Učitelé", "male", "pl"),  # -é: nominative plural
        ("cs", "Herečky jsou <mask>.", "Herečky", "female", "pl"),
        ("pl", "Nauczyciel jest <mask>.", "Nauczyciel", "male", "sg"),
        ("pl", "Nauczyciele są <mask>.", "Nauczyciele", "male", "pl"),
        ("pl", "Lekarka jest <mask>.", "Lekarka", "female", "sg"),
        ("pl", "Studentki są <mask>.", "Studentki", "female", "pl"),
        ("sk", "Študenti sú <mask>.", "Študenti", "male", "pl"),
        # kinship and person lemmas anywhere, in any case form
        ("cs", "Jeho syn je <mask>.", "Jeho syn", "male", "sg"),  # the possessor "jeho" (lemma on) is not the subject
        ("cs", "Její dcera je <mask>.", "Její dcera", "female", "sg"),
        ("cs", "Ta paní je <mask>.", "Ta paní", "female", "sg"),
        ("pl", "<mask> jest jego dzieckiem.", "jego dzieckiem", "neutral", "sg"),  # instrumental singular
        ("pl", "Myślę o tym człowieku, że jest <mask>.", "tym człowieku", "neutral", "sg"),  # locative singular
        ("pl", "Dziewczęta lubią <mask>.", "Dziewczęta", "female", "pl"),
        ("pl", "<mask> jest ulubionym zajęciem mojego brata.", "mojego brata", "male", "sg"),
        ("sk", "Môjmu otcovi chutí <mask>.", "Môjmu otcovi", "male", "sg"),
        # Czech number: genitive/locative singular vs plural, accusative plural
        ("cs", "Od té ženy dostal <mask>.", "té ženy", "female", "sg"),  # té: singular determiner
        ("cs", "U ženy je <mask>.", "ženy", "female", "sg"),  # u + genitive: singular
        ("cs", "Ženy se zajímají o <mask>.", "Ženy", "female", "pl"),  # sentence-initial -y: nominative plural
        ("cs", "O muži se říká, že je <mask>.", "muži", "male", "sg"),  # o + locative: singular
        ("cs", "Muži by měli být <mask>", "Muži", "male", "pl"),
        ("cs", "Znám ty muže, jsou <mask>.", "ty muže", "male", "pl"),  # ty: plural determiner (accusative plural)
        ("cs", "Mé sestře se líbí <mask>.", "Mé sestře", "female", "sg"),  # -e of an a-stem: dative singular
        ("cs", "Kluci sní o <mask>", "Kluci", "male", "pl"),  # stem change k -> c before -i: plural only
        ("cs", "Bratři jsou <mask>.", "Bratři", "male", "pl"),
        ("pl", "Kobiety interesują się <mask>.", "Kobiety", "female", "pl"),
        # osoba: non-binary only with the adjective
        ("cs", "Nebinární osoba pracuje jako <mask>.", "Nebinární osoba", "non-binary", "sg"),
        ("pl", "Osoba niebinarna jest <mask>.", "Osoba niebinarna", "non-binary", "sg"),
        ("cs", "Osoba pracuje jako <mask>.", "Osoba", None, "sg"),
    ],
)
def test_subject_category_and_number(lang, text, term, category, number):
    r = read_subject(text, lang)
    assert (r.term, r.category, r.number) == (term, category, number), r
    if category is None:
        assert r.reason.startswith("osoba_ambiguous")


@pytest.mark.parametrize(
    "lang,text",
    [
        ("cs", "Kočka je <mask>."),  # -ka without an agent stem is not a job noun
        ("cs", "Večer je <mask>."),  # -er alone is not an agent suffix
        ("cs", "V nemocnici pracuje <mask>."),  # -nice outside subject position is not read as a person
    ],
)
def test_non_person_nouns_are_not_subjects(lang, text):
    assert read_subject(text, lang) is None
