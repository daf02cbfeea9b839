"""On-task requests in other languages (round 8 of the recogniser: French, German, Spanish
and Chinese; round 9: Portuguese, Italian and Japanese, and wider politeness and function
words in each).

A competent model understands "Résous le problème." or "验证上面的答案。" as well as their
English twins. The reader here is deliberately closed: each language has a short lexicon of
request words (act verbs in their imperative and infinitive forms, answer nouns, words that
qualify an answer, politeness and function words), and a text is read only when *every*
one of its words is in one language's lexicon and it asks an act. Anything else (a content
word: "soleil", "poema", "Wetter", "日落") fails closed, as before: the caller reads it as
off-task. So a foreign request about something else can never leak through this reader.

:func:`foreign_request` returns the act read (``solve``, ``check``, ``vote``, ``restate``),
whether it is inverted (a wrong answer on purpose), or ``None`` (not read: fail closed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["ForeignReading", "foreign_request"]


@dataclass(frozen=True)
class ForeignReading:
    """What a foreign request asks: its act (or ``none``: a greeting, thanks) and whether a
    wrong answer is its goal."""

    act: str
    inverted: bool = False


def _lexicon(table: dict[str, str]) -> dict[str, str]:
    return {word: tag for words, tag in table.items() for word in words.split()}


# Tags: an act (solve, check, vote, restate), "give" (a transfer verb: with an answer noun
# it asks the answer), "answer" (an answer noun), "wrong" (an answer not correct), "purpose"
# (on purpose), "most" (the largest share), "least" (the smallest share: an inverted vote,
# round 9), "err" (make a mistake: a wrong answer asked, round 9), "fix" (correct it: beside
# a check), "if" (a condition), "no" (a negation) and "fn" (function and politeness words:
# read past).
_FR = _lexicon(
    {
        "résous résoudre resous resoudre calcule calculer trouve trouver détermine "
        "determine déterminer réponds répondre reponds": "solve",
        "vérifie vérifier verifie verifier vérifiez contrôle controle contrôler relis "
        "relire examine examiner évalue evalue évaluer juge juger": "check",
        "corrige corriger corrigez rectifie": "fix",
        "répète répéter repete repeter répétez recopie recopier copie copier reprends "
        "reprendre transmets transmettre": "restate",
        "donne donner donnez indique indiquer écris écrire ecris ecrire fournis fournir "
        "choisis choisir sélectionne selectionne elige": "give",
        "réponse reponse réponses reponses résultat resultat résultats solution "
        "solutions nombre valeur": "answer",
        "mauvaise mauvais fausse faux incorrecte incorrect erronée erronee": "wrong",
        "volontairement exprès expres délibérément deliberement": "purpose",
        "fréquente fréquent frequente frequent majorité majorite majoritaire": "most",
        "moins": "least",
        "trompe tromper": "err",
        "erreur erreurs": "wrong",
        "si": "if",
        "ne pas jamais": "no",
        "le la les l un une des du de d ce cet cette ces à a au aux et ou en par pour sur "
        "dans plus haut ci dessus précédente précédent precedente precedent dernière "
        "derniere dernier donnée donnee donné est juste bonne bon correcte correct "
        "problème probleme exercice question tâche tache besoin s il te vous plaît plait "
        "merci bonjour salut tous toutes telle tel quelle quel quels parmi celles ceux celle "
        "celui fin uniquement deux trois laquelle lequel lesquelles modèles modeles doit "
        "être etre sans modifier changer tel telle quels quelles j espère espere tout va bien "
        "côté cote votre vos y t il avez as "
        "seulement étape etape qui que toi puis ensuite ta ton tes modèle modele peux "
        "pouvez tu moi me finale final": "fn",
    }
)
_DE = _lexicon(
    {
        "löse lösen loese loesen berechne berechnen bestimme bestimmen finde finden "
        "beantworte beantworten ermittle ermitteln rechne rechnen": "solve",
        "prüfe prüfen pruefe pruefen überprüfe überprüfen ueberpruefe kontrolliere "
        "kontrollieren verifiziere verifizieren bewerte bewerten": "check",
        "korrigiere korrigieren berichtige": "fix",
        "wiederhole wiederholen übernimm übernehmen kopiere kopieren": "restate",
        "gib geben nenne nennen schreibe schreiben wähle wählen waehle liefere liefern": "give",
        "antwort antworten endantwort ergebnis ergebnisse lösung loesung lösungen zahl "
        "wert": "answer",
        "falsche falsch falschen fehlerhafte unrichtige": "wrong",
        "absichtlich bewusst vorsätzlich": "purpose",
        "häufigsten haeufigsten häufigste mehrheit meisten": "most",
        "wenigsten seltensten": "least",
        "irre": "err",
        "fehler": "wrong",
        "falls wenn": "if",
        "nicht nie keine": "no",
        "die der das den dem des ein eine einen einer und oder an am im in zu zur zum von "
        "mit auf für fuer dann diese dieses diesen oben vorherige vorherigen letzte letzten "
        "vorige obige obigen "
        "aufgabe frage problem bitte danke nötig noetig ist sie es richtig richtige "
        "korrekt korrekte wörtlich woertlich genau so vorkommt kommt vor am ende "
        "schritt endgültige endgueltige du kannst könntest mir guten morgen tag hallo "
        "zusammen allerseits aus modelle modell genannt haben hat gegeben gegebene dich "
        "zwei drei welche welcher welches unverändert unveraendert ohne änderung aenderung "
        "einfach nur noch einmal deine dein ihre ihr unter vielen dank": "fn",
    }
)
_ES = _lexicon(
    {
        "resuelve resolver resuelva calcula calcular encuentra encontrar determina "
        "determinar responde responder halla hallar": "solve",
        "comprueba comprobar verifica verificar revisa revisar evalúa evalua evaluar "
        "examina examinar": "check",
        "corrige corrígela corrigela corregir": "fix",
        "repite repetir copia copiar reproduce reproducir transmite": "restate",
        "da dame darme dar di escribe escribir escríbela escribela escríbelo dímela dámela "
        "indica indicar elige elegir escoge "
        "selecciona proporciona": "give",
        "respuesta respuestas resultado resultados solución solucion soluciones número "
        "numero valor": "answer",
        "incorrecta incorrecto errónea erronea equivocada falsa falso mala": "wrong",
        "propósito proposito adrede intencionadamente": "purpose",
        "frecuente mayoría mayoria": "most",
        "más mas": "more",
        "menos": "least",
        "equivócate equivocate equivócate equivocarte": "err",
        "error errores": "wrong",
        "si": "if",
        "no nunca": "no",
        "el la los las lo un una unos unas y o a al de del en con por para sobre este "
        "esta estos ese esa arriba anterior anteriores última ultima último ultimo dada "
        "dado es correcta correcto problema ejercicio pregunta tarea favor gracias hace "
        "falta sin cambios que se veces puedes podrías tú me final paso hola buenos buenas "
        "días dias todos entre hay tal cual qué tal tiene tienen ser debe dos tres cuál cual "
        "modelo modelos tu tus su sus paso etapa exactamente solo sólo solamente al": "fn",
    }
)
_PT = _lexicon(
    {
        "resolva resolver resolve calcule calcular calcula encontre encontrar determine "
        "determinar responda responder ache achar": "solve",
        "verifique verificar verifica confira conferir confere revise revisar revisa "
        "examine examinar avalie avaliar cheque checar": "check",
        "corrija corrigir corrige": "fix",
        "repita repetir repete copie copiar copia reproduza reproduzir transcreva": "restate",
        "dê dá informe informar indique indicar escreva escrever escreve forneça fornecer "
        "escolha escolher selecione diga dizer mostre apresente": "give",
        "resposta respostas resultado resultados solução solucao soluções solucoes número "
        "numero valor": "answer",
        "errada errado incorreta incorreto falsa falso erro erros": "wrong",
        "propósito proposito propositalmente intencionalmente": "purpose",
        "erre": "err",
        "frequente maioria": "most",
        "mais": "more",
        "menos": "least",
        "se caso": "if",
        "não nao nunca": "no",
        "o a os as um uma e ou de do da dos das no na nos nas em por para com sobre este "
        "esta isso essa esse acima anterior anteriores última ultima último ultimo dada dado "
        "é correta correto certa certo problema exercício exercicio questão questao pergunta "
        "tarefa favor obrigado obrigada pela pelo ajuda olá ola bom dia boa tarde todos final "
        "passo etapa exatamente apenas só somente sem mudanças alterações alteracoes que "
        "estiver for você voce me modelo modelos duas dois três qual vez": "fn",
    }
)
_IT = _lexicon(
    {
        "risolvi risolvere calcola calcolare trova trovare determina determinare rispondi "
        "rispondere": "solve",
        "verifica verificare controlla controllare rivedi rivedere esamina esaminare valuta "
        "valutare": "check",
        "correggi correggere correggila": "fix",
        "ripeti ripetere copia copiare riporta riportare trascrivi": "restate",
        "dai dammi dare scrivi scrivere indica indicare fornisci fornire scegli scegliere "
        "seleziona dimmi": "give",
        "risposta risposte risultato risultati soluzione soluzioni numero valore": "answer",
        "sbagliata sbagliato errata errato falsa falso scorretta scorretto errore": "wrong",
        "apposta deliberatamente intenzionalmente": "purpose",
        "sbaglia": "err",
        "frequente maggioranza": "most",
        "più piu": "more",
        "meno": "least",
        "se": "if",
        "non mai": "no",
        "il lo la i gli le l un una uno e o di del della dei delle da dal dalla in nel nella "
        "con su per questo questa sopra precedente precedenti ultima ultimo data dato è "
        "corretta corretto giusta giusto problema esercizio domanda compito favore grazie "
        "ciao buongiorno tutti finale passo passaggio esattamente solo soltanto senza "
        "modifiche che ti prego puoi potresti tu mi modello modelli due tre quale": "fn",
    }
)
_LATIN = {"fr": _FR, "de": _DE, "es": _ES, "pt": _PT, "it": _IT}
# Chinese is read by segmenting into known phrases, longest first.
_ZH = {
    "解": "solve", "解答": "solve", "解决": "solve", "并": "fn", "然后": "fn",
    "求解": "solve", "计算": "solve", "算出": "solve",
    "回答": "solve", "验证": "check", "检查": "check", "核对": "check", "审查": "check",
    "校验": "check", "校验者": "fn", "作为": "fn", "改正": "fix", "纠正": "fix",
    "重复": "restate", "复述": "restate", "照抄": "restate", "给出": "give", "给": "give",
    "写出": "give", "选出": "give", "选择": "give", "答案": "answer", "结果": "answer",
    "解答结果": "answer", "错误的": "wrong", "错的": "wrong", "故意": "purpose",
    "出现次数最多的": "most", "最多的": "most", "多数": "most", "如有错误": "if",
    "如果": "if", "不要": "no", "这道题": "fn", "这个问题": "fn", "题": "fn",
    "上面的": "fn", "上面": "fn", "上一步的": "fn", "上一步": "fn", "是否正确": "fn",
    "正确答案": "answer", "正确": "fn", "请": "fn", "一个": "fn", "的": "fn", "谢谢": "fn",
    "最后": "fn", "最终": "fn", "大家好": "fn", "你好": "fn", "大家": "fn",
    # round 9: wider function words; the smallest share; a mistake asked
    "一步一步": "fn", "逐步": "fn", "模型": "fn", "上一个": "fn", "从": "fn", "中": "fn",
    "那个": "fn", "它": "fn", "输出": "give", "大多数": "most", "最少的": "least",
    "错了": "wrong", "错误": "wrong", "两个": "fn", "三个": "fn", "哪个": "fn", "是": "fn",
    "原样": "fn", "不变": "fn", "地": "fn", "得": "fn", "和": "fn", "里": "fn",
}  # fmt: skip
# Japanese (round 9) is segmented the same way, longest first; kana mark a Japanese text.
_JA = {
    "解いて": "solve", "解け": "solve", "解きなさい": "solve", "解く": "solve",
    "計算して": "solve", "計算する": "solve", "求めて": "solve", "求めなさい": "solve",
    "答えて": "solve", "答えなさい": "solve",
    "確認して": "check", "確認する": "check", "検証して": "check", "チェックして": "check",
    "見直して": "check", "検討して": "check", "点検して": "check",
    "訂正して": "fix", "直して": "fix", "修正して": "fix",
    "繰り返して": "restate", "繰り返す": "restate", "写して": "restate", "コピーして": "restate",
    "書いて": "give", "書き": "give", "出して": "give", "示して": "give", "教えて": "give",
    "出力して": "give", "選んで": "give", "挙げて": "give",
    "答え": "answer", "解答": "answer", "回答": "answer", "結果": "answer", "答": "answer",
    "間違った": "wrong", "間違い": "wrong", "誤った": "wrong", "誤り": "wrong",
    "不正解": "wrong", "わざと": "purpose", "故意に": "purpose", "意図的に": "purpose",
    "一番多い": "most", "最も多い": "most", "多数派": "most", "多数決": "most",
    "一番少ない": "least", "最も少ない": "least",
    "間違っていれば": "if", "誤りがあれば": "if", "もし": "if", "なら": "if",
    "しないで": "no", "ないで": "no", "ません": "no",
    "ください": "fn", "下さい": "fn", "お願いします": "fn", "よろしく": "fn",
    "ありがとうございます": "fn", "ありがとう": "fn", "こんにちは": "fn",
    "この": "fn", "その": "fn", "上の": "fn", "前の": "fn", "ステップ": "fn", "問題": "fn",
    "最後に": "fn", "最後": "fn", "最終的な": "fn", "最終": "fn", "中で": "fn", "中から": "fn",
    "そのまま": "fn", "正しいか": "fn", "正しい": "fn", "正しく": "fn", "どうか": "fn",
    "を": "fn", "が": "fn", "の": "fn", "は": "fn", "に": "fn", "で": "fn", "と": "fn",
    "も": "fn", "て": "fn", "して": "fn", "つ": "fn", "一つ": "fn", "全部": "fn",
}  # fmt: skip
_JA_LONGEST = max(len(k) for k in _JA)
_KANA = re.compile(r"[぀-ヿ]")
_ZH_LONGEST = max(len(k) for k in _ZH)
_PUNCT = re.compile(r"[\s\u3000-\u303f\uff00-\uff0f\uff1a-\uff20.,;:!?¿¡«»\"'\u2019()\-]+")
_LATIN_WORD = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _tags_latin(text: str) -> list[str] | None:
    words = _LATIN_WORD.findall(text.lower())
    if not words:
        return None
    for lexicon in _LATIN.values():
        tags = [lexicon.get(w) for w in words]
        if all(t is not None for t in tags):
            return [t for t in tags if t is not None]
    return None


def _tags_segmented(text: str, lexicon: dict[str, str], longest: int) -> list[str] | None:
    tags: list[str] = []
    for piece in _PUNCT.split(text):
        i = 0
        while i < len(piece):
            for n in range(min(longest, len(piece) - i), 0, -1):
                tag = lexicon.get(piece[i : i + n])
                if tag is not None:
                    tags.append(tag)
                    i += n
                    break
            else:
                return None  # a character no phrase covers: fail closed
    return tags


@lru_cache(maxsize=1 << 10)
def foreign_request(text: str) -> ForeignReading | None:
    """The on-task request a French, German, Spanish, Portuguese, Italian, Chinese or
    Japanese ``text`` makes, or ``None``
    when any of its words is outside the lexicons or it asks no act (module docstring)."""
    if _KANA.search(text):
        tags = _tags_segmented(text, _JA, _JA_LONGEST)
    elif _CJK.search(text):
        tags = _tags_segmented(text, _ZH, _ZH_LONGEST)
    else:
        tags = _tags_latin(text)
    if not tags or "no" in tags:
        return None  # a negation is not read here: fail closed
    present = set(tags)
    wrong = ("wrong" in present or "err" in present) and "if" not in present
    if "least" in present and "answer" in present and "if" not in present:
        return ForeignReading("vote", inverted=True)  # "la respuesta menos frecuente"
    if "most" in present or {"more", "restate"} <= present:
        act = "vote"  # "la más frecuente", "la que más se repite"
    elif "check" in present:
        act = "check"
    elif "restate" in present:
        act = "restate"
    elif (
        "solve" in present
        or ("give" in present and "answer" in present)
        or (wrong and "err" in present)
    ):
        act = "solve"
    elif "fix" in present:
        act = "check"  # "corrígela si hace falta": what is corrected was checked
    elif present <= {"fn"}:
        return ForeignReading("none")  # a greeting or thanks: asks nothing
    else:
        return None
    if "fix" in present and act == "solve":
        act = "check"
    if wrong and act in ("check", "restate"):
        return None  # "check it and give a wrong one": not read here, fail closed
    return ForeignReading(act, inverted=wrong)
