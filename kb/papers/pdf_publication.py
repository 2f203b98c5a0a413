"""Where a journal article says it appeared, read from its own page 1 and reference list: a grammar of
publication statements (``PUBLICATION_PATTERNS``: journal headers and footers, "published in", "to appear in",
"accepted in", "reprinted / reproduced from", "submitted to", a proceedings' permission block, a preprint
server's stamp, IEEE Xplore's stamp, a version of this paper published elsewhere as page 2 states it or as a
footnote names the earlier paper by its title, a meeting alone at page 1's foot or in a proceedings' footer),
each row saying where its year comes from (a preprint that states no other publication has its server for
venue: "arXiv", "bioRxiv"); publishers ("WILEY-VCH Verlag GmbH", "Association for Computing
Machinery") are told apart from venues and never stored as one. A note that points at a citation ("a modified
version of Zeileis (2004)") is resolved through the paper's own reference list, which gives the venue, year
and DOI of the published version; so is page 1 citing the entry of its own title ('(Turner and Firth
2012)'). Page 1 citing the article itself names its journal, or the edited book it is a chapter of. A DOI
printed alone under the article's dates on a later page (Science's) is the article's where page 1 prints none.
Where no statement names the venue, a journal the lexicon of journal names (``kb.papers.journals``) knows is
the venue where the page names its own journal: in a citation's shape or alone in a running header or footer
(``_from_lexicon``); else a meeting the lexicon of meetings (``kb.papers.conferences``) knows, where page 1
names it as its own: in a header or footer, above the title, in a permission block or after a statement
(``_from_meetings``).

Per-journal differences are rows of the pattern tables, not branches of the code.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from kb.papers import conferences, identifiers, journals

if TYPE_CHECKING:
    from kb.papers.pdf_page import PdfArticle


# -- the publication: journal line of page 1, or the reference it points at ----------------------------

MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_ANY_MONTH = rf"(?i:{MONTH})"  # in a header set in capitals too ('AUGUST 2021')
_MONTH_WORD = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
               r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\b")  # a whole word, not 'Marine'

_YYYY = r"(?P<year>(?:19|20)\d\d)"
# A venue's name: capitalised words and the small words between them, '&' too ('Information Processing &
# Management').
# Two bodies' names may share a word ('IEEE/CVF', 'IEEE/ACM').
# A name opens at a word's start (or after an ordinal's suffix run into it: 'the 23rdInternational'), never
# inside a word a scan's text layer misread ('A~ociation for ...' is no name 'on for ...').
_VENUE = (r"(?P<venue>(?:(?<![\w~])|(?<=\d(?:st|nd|rd|th)))(?:[A-Z][\w&/-]*|of|and|in|for|the|on)"
          r"(?: (?:[A-Z][\w&/-]*|of|and|in|for|the|on|&))*)")
# Where a statement names a proceedings: 'Proceedings of the 11th', 'the Second International'.
# A year may open the proceedings' name ('the 2015 USENIX Annual Technical Conference'): the year it states.
# An ordinal's suffix set as a superscript comes apart from its number ('the 37 th International', PMLR's
# footnote) or runs into the next word ('the 23rdInternational', AISTATS'): ``_ORDINAL_WORD`` is an ordinal
# and what ends it.
_ORDINAL = (r"(?:\d+ ?(?:st|nd|rd|th)|First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|"
            r"(?:Twenty|Thirty|Forty|Fifty|Sixty|Seventy|Eighty|Ninety)-(?i:first|second|third|fourth|fifth|"
            r"sixth|seventh|eighth|ninth)|[A-Z][a-z]+(?:teenth|tieth|th))")
_ORDINAL_WORD = rf"(?:{_ORDINAL} |\d+(?:st|nd|rd|th)(?=[A-Z]))"
# OpenProceedings and many a footnote abbreviate it: 'Published in Proc. 19th International Conference on
# Extending Database Technology (EDBT)', 'To appear in Proc. of the 2nd Workshop on ...'.
_PROCEEDINGS = (rf"(?:the )?(?:(?:Proceedings|Proc\.) of (?:the )?|Proc\. (?:the )?)?(?:{_YYYY} )?"
                rf"{_ORDINAL_WORD}?")
# A journal's name as its citation line prints it, abbreviations too ('Random Struct. Alg.'), never run on
# from the word or comma before it ('Wiley Periodicals, Inc. Random Struct. Alg.': the name opens at
# 'Random'); a page number or range may stand before it ('1824 J. Med. Chem. 2008, 51, 1824–1830',
# '11934–11939 PNAS September 3, 2002 vol. 99', its bars lost). A name may open in lower case before a capital
# ('eLife', 'iScience', 'mBio'); a month is no name ('1 December 2011 | Volume 6', PLOS's footer). The group
# is 'journal': the citation's shape around it (volume, pages, year) makes even one word a periodical's name
# ('Bioinformatics, 37(15), 2021, 2112–2120'). After 'et al.,' it opens there ('Lovelace et al., Sci. Adv.').
# A meeting's acronym as its conference line and reference format print it: two capitals at least ('ICS',
# 'KDD', 'SIGMOD', 'MobiCom'), two meetings held jointly under one ('ESEC/FSE', 'NAACL-HLT'), and a
# two-capital kind of paper after it ('CHI EA', the conference's extended abstracts).
_ACRONYM = r"[A-Z][A-Za-z]*[A-Z][A-Za-z]*"  # two capitals at least: 'ICS', 'MobiCom', 'EuroTeX'
_MEETING_ACRONYM = rf"{_ACRONYM}(?:[/-]{_ACRONYM})?(?: [A-Z]{{2}}(?![\w/]))?"
_JOURNAL_NAME = r"(?P<journal>(?:[A-Z]|[a-z][A-Z])[\w&-]*\.?(?: (?:[A-Z][\w&-]*\.?|of|and|in|for|the|on))*)"
_JOURNAL = rf"(?:(?<=al\., )|(?<![^\W\d] )(?<!, )(?<![\w,]))(?!{_MONTH_WORD}){_JOURNAL_NAME}"
# 'presented at' is left out: it names the meeting where an earlier version was read, not the publication
# (a row below reads it where the paper itself was presented).
# A reprint may say how it differs ('Reprinted with corrections from The Bell System Technical Journal').
# A paper may say what kind it is ('Published as a conference paper at ICLR 2021'); one under review is not
# published anywhere ('Under review as a conference paper at ...').
_STATEMENT = (r"(?:[Pp]ublished|[Aa]ppeared|[Aa]ccepted(?: for publication)?|[Ii]ncluded|"
              r"(?:[Rr]e)?[Pp]rinted(?: with (?:corrections|revisions|permission))?|"
              r"[Rr]eproduced(?: with (?:the )?(?:kind )?permission)?|[Aa]ppears?)"
              r"(?: online| as an? (?:conference|journal|workshop|full|short) paper)? "
              r"(?:in|at|(?<![Pp]ublished )(?<!PUBLISHED )by|from) ")  # who 'published by' is the publisher
# How articles state where they appeared; each row names its groups (venue, year, yy: a two-digit year,
# volume, issue, cite: a citation such as 'Zeileis (2004)' to resolve in the reference list) and where its
# year comes from: "group" (the row's own), "near" (the first year within YEAR_WINDOW characters after the
# statement: '... Biometrical Journal. Copyright © 2009 ...'), or "none" (a submission states no year).
PUBLICATION_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    (name, re.compile(pattern), year) for name, pattern, year in [
        ("JSS header", rf"(?P<venue>Journal of Statistical Software),? (?:{MONTH} )?(?P<year>\d{{4}}), "
                       r"Volume (?P<volume>\d+), Issue (?P<issue>\d+)", "group"),
        ("JMLR header",
         r"(?P<venue>Journal of Machine Learning Research) (?P<volume>\d+) \((?P<year>\d{4})\)", "group"),
        # AAAI Press's footer of the proceedings it prints for other meetings: 'From: KDD-96 Proceedings.
        # Copyright © 1996, AAAI (www.aaai.org).', 'From: ISMB-95 Proceedings.'
        ("AAAI Press footer: From: ACRONYM-YY Proceedings",
         rf"\bFrom: (?P<venue>{_ACRONYM})-(?P<yy>\d\d) Proceedings\b", "group"),
        # OUP's header of an article published online before its issue: 'Bioinformatics Advance Access
        # published February 12, 2012'.
        ("journal header: JOURNAL Advance Access published DATE",
         rf"{_JOURNAL} Advance Access (?:published|publication)(?: online)?:? (?:on )?"
         rf"(?:{MONTH} \d{{1,2}},? |\d{{1,2}} {MONTH},? ){_YYYY}", "group"),
        ("published in ..., on MONTH YEAR",
         rf"published (?:online )?in the {_VENUE}, on {MONTH} (?P<year>\d{{4}})", "group"),
        ("preprint of an article published in",
         rf"article published in {_VENUE}, Volume (?P<volume>\d+), Number (?P<issue>\d+)"
         r".{0,80}?(?:©|\(c\)) ?(?P<year>\d{4})", "group"),
        ("version of CITE, published in",
         r"(?:version of|published as) (?P<cite>[A-Z][^()]{0,90}?) \((?P<year>\d{4})[a-z]?\)"
         rf"(?:,? (?:published )?in the {_VENUE})?", "group"),
        ("based on a publication in VENUE – CITE (YEAR)",
         rf"based on (?:a|the|an) (?:publication|paper|article) (?:published )?in (?:the )?{_VENUE}\W+"
         r"(?P<cite>[A-Z][^()]{0,90}?) \((?P<year>\d{4})", "group"),
        # The citation first, the journal after it: 'This document is based on the manuscript of Kraemer et
        # al. (2018) which was published in the R-Journal' (a vignette's abstract): the cited reference entry
        # names the journal as the paper's list prints it ('The R Journal, 2018'), the sentence a spelling of
        # it.
        ("based on the manuscript of CITE (YEAR), which was published in VENUE",
         r"based on (?:a|the|an) (?:manuscript|publication|paper|article) (?:of|by) "
         r"(?P<cite>[A-Z][^()]{0,90}?) \((?P<year>\d{4})[a-z]?\),? (?:which|that) (?:was|has been|is) "
         r"published in (?:the )?[A-Z]", "group"),
        ("corresponds to a paper published in",
         rf"corresponds to (?:a|the|an) (?:paper|article) published in (?:the )?{_VENUE}", "near"),
        # IEEE's header in capitals: 'IEEE TRANSACTIONS ON ..., VOL. 43, NO. 8, AUGUST 2021'; a bimonthly's
        # issue spans two months ('IEEE/ACM TRANSACTIONS ON COMPUTATIONAL BIOLOGY AND BIOINFORMATICS, VOL. 18,
        # NO. 2, MARCH/APRIL 2021').
        ("journal line: VENUE, Vol. N, No. N, MONTH YEAR",
         rf"{_VENUE},? (?i:Vol(?:\.|ume)?) ?(?P<volume>\d+),? (?i:No\.|Number|Issue) ?(?P<issue>\d+),? "
         rf"(?:{_ANY_MONTH}(?: ?[/–-] ?{_ANY_MONTH})? )?(?P<year>\d{{4}})", "group"),
        # The year before the volume: 'Nucleic Acids Research, 2021, Vol. 49, No. 1', 'PNAS 2021 Vol. 118
        # No. 15'; a journal numbering its issues within the year only: 'The PracTeX Journal, 2007, No. 3'.
        ("journal line: VENUE, YEAR, Vol. N, No. N",
         rf"{_JOURNAL},? {_YYYY},? (?:(?i:Vol(?:\.|ume)?) ?(?P<volume>\d+),? )?(?i:No\.|Number|Issue) ?"
         r"(?P<issue>\d+)", "group"),
        # The volume's year in parentheses: 'TUGboat, Volume 41 (2020), No. 1'; the R Journal's footer: 'The R
        # Journal Vol. 12/1, June 2020'.
        ("journal line: VENUE, Volume N (YEAR), No. N",
         rf"{_JOURNAL},? (?i:Vol(?:\.|ume)?) ?(?P<volume>\d+) \({_YYYY}\),? (?i:No\.|Number|Issue) ?"
         r"(?P<issue>\d+)", "group"),
        # A footer may print the month without the year ('The R Journal Vol. 6/1, June'): the venue alone.
        ("journal line: VENUE Vol. N/N, MONTH YEAR",
         rf"(?<![-/]){_JOURNAL},? (?i:Vol(?:\.|ume)?) ?(?P<volume>\d+)/(?P<issue>\d+)"
         rf"(?:,? (?:{_ANY_MONTH} )?{_YYYY})?",
         "group"),
        # An issue numbered within its year, with the year after it or before it, and the article's pages, as
        # a reprint's box cites it: 'NAME: TITLE, Die TeXnische Komödie 2/2004, S. 81-87', 'Zpravodaj
        # 2022/1-4, pp. 3-20'. The name may follow the comma ending the title.
        ("journal line: JOURNAL N/YEAR, pages",
         rf"(?<![\w&-]){_JOURNAL_NAME} (?:(?P<issue>\d{{1,2}}(?:[–-]\d{{1,2}})?)/{_YYYY}|"
         rf"(?P<year2>(?:19|20)\d\d)/(?P<issue2>\d{{1,2}}(?:[–-]\d{{1,2}})?)),? (?:S\.|pp?\.|pages?) ?\d+",
         "group"),
        # A journal's citation line in its header or after the abstract: 'LISP AND SYMBOLIC COMPUTATION: An
        # International Journal, 4, 223-242, 1991', 'Random Struct. Alg., 22: 60 – 65, 2002'; without the
        # comma after the name, as Kluwer's headers print it ('Minds and Machines 9: 1–22, 1999.') and a
        # small society journal's ('Fibre Diffraction Review 13, 19 - 22, 2005').
        ("citation line: JOURNAL, VOLUME: PAGES, YEAR",
         rf"{_JOURNAL}(?:: [A-Z][\w ]{{0,40}}?)?,? (?P<volume>\d{{1,3}})(?:\((?P<issue>\d+)\))?[:,] ?"
         rf"\d+ ?[–-] ?\d+, (?:{MONTH} )?{_YYYY}\b", "group"),
        # An older journal's header: the name, the volume and the pages, and the issue's month and year after
        # them without a comma, often on the line under them (Biometrics: 'BIOMETRICS 58, 129-136' / 'March
        # 2002'; 'Econometrica 53, 1315–1335 November 1985'). The month is what makes the year the issue's.
        ("journal header: JOURNAL VOLUME, PAGES / MONTH YEAR",
         rf"{_JOURNAL} (?P<volume>\d{{1,4}}), (?:pp?\. ?)?\d+ ?[–-] ?\d+ {_ANY_MONTH} {_YYYY}\b",
         "group"),
        # ResearchGate's cover page before the article: what it is, where it appeared and when ('Article in
        # Journal of the Operational Research Society · February 1999', 'Conference Paper in Lecture Notes in
        # Computer Science · September 2010'); without 'in ...' the date alone ('Chapter · January 2015').
        ("ResearchGate cover: KIND in VENUE · MONTH YEAR",
         r"(?<![\w-])(?:Article|Conference Paper|Chapter|Book|Preprint|Thesis|Technical Report|"
         rf"Working Paper)(?: in {_VENUE})? · (?:{MONTH} )?{_YYYY}\b", "group"),
        # Elsevier's header: 'Theoretical Computer Science 321 (2004) 5 – 12'.
        ("journal header: JOURNAL VOLUME (YEAR) PAGES",
         rf"{_JOURNAL} (?P<volume>\d{{1,4}}) \({_YYYY}\) \d+ ?[–-] ?\d+\b", "group"),
        # Elsevier's header of an article in press, its volume and pages not yet known: 'Biochimica et
        # Biophysica Acta xxx (2016) xxx–xxx' (a name with 'et', 'de', as Latin and French names have).
        ("journal header in press: JOURNAL xxx (YEAR) xxx–xxx",
         r"(?<![\w,] )(?<![\w,])"
         r"(?P<journal>[A-Z][\w&-]*(?: (?:[A-Z][\w&-]*|of|and|in|for|the|on|et|de|des|du))*)"
         rf" (?i:x{{3,}}) \({_YYYY}\) (?i:x{{3,}}) ?[–-] ?(?i:x{{3,}})", "group"),
        # The same parts in APA's order: 'Jl. of Interactive Learning Research (2008) 19(2), 185-224'.
        ("journal header: JOURNAL (YEAR) VOLUME(ISSUE), PAGES",
         rf"{_JOURNAL},? \({_YYYY}\),? (?P<volume>\d{{1,4}})(?:\((?P<issue>\d+)\))?, "
         r"(?:pp?\. ?)?\d+ ?[–-] ?\d+\b", "group"),
        # The volume, issue and pages, with the issue's date beside them on the header's next line or after
        # its DOI: 'Journal of Data Science 20 (1), 34–50 DOI: 10.6339/21-JDS1030' / 'January 2022'.
        ("journal header: JOURNAL VOLUME (ISSUE), PAGES",
         rf"{_JOURNAL},? (?P<volume>\d{{1,4}}) ?\((?P<issue>\d+)\),? (?:pp?\. ?)?\d+ ?[–-] ?\d+\b"
         r"(?! ?\()", "near"),
        # OUP's header: 'Bioinformatics, 37(15), 2021, 2112–2120'; a supplement's pages: 'Bioinformatics, 37,
        # 2021, i1–i9' (ISMB).
        ("journal header: JOURNAL, VOLUME(ISSUE), YEAR, PAGES",
         rf"{_JOURNAL}, (?P<volume>\d{{1,4}})(?:\((?P<issue>\d+)\))?, {_YYYY}, (?:pp?\. ?)?[a-z]?\d+ ?[–-] ?"
         r"[a-z]?\d+\b", "group"),
        # OUP's since 2023, the year first: 'Bioinformatics, 2023, 39(1), btac811', 'Nucleic Acids Research,
        # 2023, 51, 5123–5135'.
        ("journal header: JOURNAL, YEAR, VOLUME(ISSUE), PAGES",
         rf"{_JOURNAL}, {_YYYY}, (?P<volume>\d{{1,4}})(?:\((?P<issue>\d+)\))?, "
         r"(?:[a-z]{0,6}\d+|\d+ ?[–-] ?\d+)\b", "group"),
        # Cell Press's footer: 'Cell Systems 12, 1–12, March 17, 2021', 'Cell Reports 34, 108765, March 2,
        # 2021'.
        ("journal footer: JOURNAL VOLUME, PAGES, MONTH DAY, YEAR",
         rf"{_JOURNAL} (?P<volume>\d{{1,4}}), (?:\d+ ?[–-] ?\d+|\d+), {MONTH} \d{{1,2}}, {_YYYY}", "group"),
        # Springer's and BMC's: 'Machine Learning (2021) 110:1357–1397', 'BMC Bioinformatics (2021) 22:123';
        # Nature's running footer: 'NATURE COMMUNICATIONS | (2021) 12:2403'.
        ("journal header: JOURNAL (YEAR) VOLUME:PAGES",
         rf"{_JOURNAL}(?: \|)? \({_YYYY}\) (?P<volume>\d{{1,4}}):\s?[A-Za-z]?\d+", "group"),
        # Vancouver's order, eLife's footer: 'eLife 2021;10:e63440'; Science's: 'Sci. Adv. 2021; 7 :
        # eabc1234'; BMC's before 2016: 'BMC Bioinformatics 2015, 16:123'.
        ("citation: JOURNAL YEAR;VOLUME:PAGES",
         rf"{_JOURNAL}\.? {_YYYY} ?[;,] ?(?P<volume>\d{{1,4}})(?:\((?P<issue>\d+)\))? ?: ?[A-Za-z]{{0,4}}\d+",
         "group"),
        # MDPI's: 'Int. J. Mol. Sci. 2021, 22, 1234.'
        ("citation: JOURNAL YEAR, VOLUME, PAGES",
         rf"{_JOURNAL} {_YYYY}, (?P<volume>\d{{1,4}}), [A-Za-z]?\d+\b", "group"),
        # Nature's and Science's: 'Nature 596, 583–589 (2021)'; Nature's footer: 'Nature | Vol 596 | 26 August
        # 2021 | 583'.
        ("citation: JOURNAL VOLUME, PAGES (YEAR)",
         rf"{_JOURNAL} (?P<volume>\d{{1,4}}), [A-Za-z]?\d+(?: ?[–-] ?\d+)? \({_YYYY}\)", "group"),
        # PNAS's footer: '19974–19975 | PNAS | December 10, 2013 | vol. 110 | no. 50'; a font's bars may give
        # no text at all (2002's: '11934–11939  PNAS  September 3, 2002  vol. 99  no. 18').
        ("journal footer: JOURNAL | DATE | vol. N | no. N",
         rf"{_JOURNAL}(?: \|)? (?:{_ANY_MONTH} (?:\d{{1,2}},? )?)?{_YYYY}(?: \|)? (?i:Vol(?:\.|ume)?) ?"
         r"(?P<volume>\d+)"
         r"(?:(?: \|)? (?i:No\.|Number|Issue) ?(?P<issue>\d+))?", "group"),
        # The same parts between wide gaps instead of bars, after the journal's site: Science's footer before
        # 2016 ('www.sciencemag.org SCIENCE VOL 334 28 OCTOBER 2011 517'), the Biophysical Journal's header
        # ('Biophysical Journal Volume 101 October 2011 1799–1807').
        ("journal footer: JOURNAL | Vol N | DATE",
         rf"(?:(?<=\.org |\.com )|(?<![\w,] )(?<![\w,])){_JOURNAL_NAME}(?: \|)? (?i:Vol(?:\.|ume)?) ?"
         rf"(?P<volume>\d+)(?: \|)? (?:\d{{1,2}} )?{_ANY_MONTH} {_YYYY}",
         "group"),
        # A running line naming the journal beside the article's DOI or the journal's site (PLOS: 'PLOS
        # Computational Biology | https://doi.org/10.1371/... March 1, 2021'; Frontiers: '... |
        # www.frontiersin.org'; any other site may be a person's: 'Ada Lovelace | www.example.org').
        ("running line: JOURNAL | DOI or site",
         rf"{_JOURNAL} \| (?:https?://(?:dx\.)?doi\.org/10\.|(?i:doi):? ?10\.|www\.frontiersin\.org)",
         "near"),
        # A volume of proceedings in a series: 'A. Vedaldi et al. (Eds.): ECCV 2020, LNCS 12346, pp. 213–229'.
        ("proceedings volume: (Eds.): VENUE YEAR, SERIES N",
         rf"\([Ee]ds?\.\):? (?P<venue>[A-Z][\w&-]*(?: [A-Z][\w&-]*)*) {_YYYY}, [A-Z][A-Za-z]{{1,5}} \d+",
         "group"),
        # Springer's footer of a volume in a series, without its editors: 'RECOMB 2021, LNBI 12635, pp. 1–15,
        # 2021.' The series names it.
        ("proceedings volume: ACRONYM YEAR, SERIES N, pp.",
         rf"(?<![\w-])(?P<venue>[A-Z][A-Za-z]*[A-Z][\w-]*) {_YYYY}, (?:LNCS|LNBI|LNAI|CCIS|LIPIcs|IFIP AICT) "
         r"\d+, pp\. ?\d", "group"),
        # A preprint server's stamp: 'bioRxiv preprint doi: https://doi.org/10.1101/...; this version posted
        # December 15, 2020.'
        ("preprint server stamp",
         rf"(?P<journal>bioRxiv|medRxiv|ChemRxiv|Research Square|Preprints\.org|SSRN) preprint\b.{{0,160}}?"
         rf"\bposted (?:online )?(?:{MONTH} \d{{1,2}},? |\d{{1,2}} {MONTH},? ){_YYYY}", "group"),
        # A chapter of an edited book, as APA cites one: 'To appear in W.R. Rouse & K.B. Boff (Eds.),
        # Organizational simulation. New York: Wiley.' The book's title, in sentence case, runs to its period.
        ("to appear in EDITORS (Eds.), BOOK.",
         rf"(?:[Tt]o be |[Tt]o )?{_STATEMENT}[A-Z][^()]{{0,120}}? \([Ee]ds?\.\),? "
         r"(?P<venue>[A-Z][^.()]{2,150}?)(?: \(pp?\. [^)]*\))?\.", "near"),
        # A statement naming the journal in a citation's shape, which makes one word a name: 'Reproduced with
        # permission from Eutypon, no. 5, Oct. 2000, pp. 7–16', 'Reprinted from Baltic J. 12, 2019'.
        ("statement: JOURNAL, No. N, MONTH YEAR",
         rf"{_STATEMENT}(?:the )?{_JOURNAL_NAME},? (?:(?i:Vol(?:\.|ume)?|No\.|Number|Issue) ?)?"
         rf"(?P<issue>\d{{1,4}}),? (?:{_ANY_MONTH},? )?{_YYYY}\b", "group"),
        # A statement followed by the whole citation of the published version, read as a reference entry:
        # 'This document was published in a similar form in Gerber F, Furrer R (2015). “Pitfalls ...” Journal
        # of Statistical Software, 63(8), 1–32.'; 'appeared, slightly revised, as: ...'.
        ("published in a similar form in CITATION",
         rf"{_STATEMENT}(?:an? )?(?:\w+ )?(?:similar|modified|different|revised|shorter|longer|extended|"
         r"abridged|condensed|earlier) (?:form|version) (?:in|as):? "
         r"(?P<entry>[A-Z][^()]{0,200}\((?:19|20)\d\d[a-z]?\).{0,300})", "none"),
        # A version of the author's earlier paper, named by its title in quotes, and where that appeared:
        # 'This is an overhauled and amplified version of my paper “Dialog with TeX” in TUGboat, vol 12 no 3,
        # ... December 1991', 'an extended version of our paper "..." published in the Proceedings of ...'.
        ("version of my paper “TITLE” in VENUE",
         r"\bversion of (?:my|our|his|her|their|the|an?) (?:\w+ )?(?:paper|article|talk|note|contribution),? "
         r"[“\"‘'][^”\"’]{2,200}[”\"’'],? "
         r"(?:(?:which |that )?(?:was |has been )?(?:published|appeared|printed) )?"
         rf"in (?:the )?{_PROCEEDINGS}{_VENUE}", "near"),
        ("published in / appeared in / accepted in / reprinted from / to appear in",
         rf"(?:[Tt]o be |[Tt]o )?{_STATEMENT}{_PROCEEDINGS}{_VENUE}(?: ?[’'‘](?P<yy>\d{{2}})\b)?", "near"),
        # 'Presented at' where the paper itself was: a workshop paper's note 'This paper was presented at the
        # Human Centred Machine Learning Workshop at CHI 2016.', 'This work is presented at the ...', a footer
        # opening 'Presented at the ...'. (An earlier version presented somewhere states nothing of this one.)
        ("this paper was presented at MEETING",
         r"(?:(?<!of )\b[Tt]his (?:paper|work|article|(?:extended )?abstract) (?:was|is|has been|will be) "
         r"[Pp]resented|"
         rf"(?:^|(?<=[.!?] ))Presented) at {_PROCEEDINGS}{_VENUE}", "near"),
        # The meeting's acronym and year, then its dates: 'CIKM’13, Oct. 27–Nov. 1', 'NDSS '16, 21-24
        # February', a Word template's 'SOSP 2007, Oct., 2004' (a month and a year left from the template);
        # joint meetings and a kind of paper keep their whole acronym ('ESEC/FSE ’20, November 8–13', 'CHI EA
        # ’24, May 11–16'). Without the dates, the place runs to the block's copyright line ('CHI EA ’25,
        # Yokohama, Japan' / '© 2025 Copyright held by the owner/author(s).').
        ("permission block: ACRONYM'YY, MONTH",
         rf"(?<![\w’'/])(?P<venue>{_MEETING_ACRONYM}) ?"
         rf"(?:[’'‘] ?(?P<yy>\d{{2}})|(?P<year>(?:19|20)\d{{2}})), "
         rf"(?:{MONTH},? ?\d|\d{{1,2}}[–-]|[A-Z][\w.]*(?:,? [A-Z][\w.]*){{0,5}} (?=(?:©|Copyright)))",
         "group"),
        # About the paper itself: 'Submitted to ...' (a footer's capital), or a preprint, paper, manuscript
        # or version submitted; prose about data 'submitted to the Earth System Grid' is not.
        ("submitted to",
         rf"(?:\b(?:[Pp]reprint|[Pp]aper|[Mm]anuscript|[Aa]rticle|[Vv]ersion|[Dd]raft) submitted|"
         rf"\bSubmitted|\bSubmission) to (?:the )?{_VENUE}", "none"),
        # A meeting by its ordinal, with its acronym and year after it: '35th Conference on Neural Information
        # Processing Systems (NeurIPS 2021)', 'The Thirty-Fifth AAAI Conference on Artificial Intelligence
        # (AAAI-21)'. After the permission block: an ACM reference line names the meeting so too, but the
        # block's acronym is the venue ('KDD').
        ("meeting: ORDINAL NAME (ACRONYM YEAR)",
         # (the acronym joined to its year by a hyphen or, typeset, an en dash: ICAD's '(ICAD–2016)')
         rf"(?<![\w-]){_ORDINAL_WORD}(?:Annual )?{_VENUE} \([A-Z]\w*(?:[- ][A-Z]\w*)*[-‐– ]?"
         rf"(?:[’'‘]?(?P<yy>\d{{2}})|{_YYYY})\)", "group"),
        # A meeting's header with its place and dates under it, the year the dates' (the name's end runs into
        # the lines under it in the flattened text: the year alone): IFAC's 'Preprints of the 20th World
        # Congress' / 'The International Federation of Automatic Control' / 'Toulouse, France, July 9-14,
        # 2017', '... Cape Town, South Africa. August 24-29, 2014', an IFAC symposium's '... December 18-20,
        # 2013. Mumbai, India'.
        ("meeting header: Preprints/Proceedings of the ORDINAL NAME ... PLACE, MONTH D-D, YEAR",
         rf"\b(?:Preprints|Proceedings) of the {_ORDINAL_WORD}"
         rf"(?:(?:[A-Z][\w&-]* (?:(?:on|of|in|for|and) )?)*(?:Congress|Conference|Symposium|Workshop)"
         rf"(?: (?:on|of|in) [A-Z][\w&-]*(?: (?:(?:and|of|in|for|on|the) )?[A-Z][\w&-]*)*)?)\b"
         rf".{{0,100}}?\b{MONTH} \d{{1,2}} ?[-–] ?\d{{1,2}}, {_YYYY}\b", "group"),
        # A series or a journal whose name opens with 'Proceedings of' and names no meeting (PMLR's header
        # 'Proceedings of Machine Learning Research vol 144:1–11, 2021', 'Proceedings of the Royal Society
        # B', 'Proceedings of the National Academy of Sciences'): 'Proceedings of' is part of its name, kept.
        # A meeting's word in the name ('the First Workshop on ...'), an ordinal or a year leaves the line to
        # the row after.
        # Its words are words, each capitalised as a name's: a meeting's name with its year glued to it
        # ('Proceedings of PracticalTEX2004 July 1, 2004', a draft's footer) is the row after's, and a month
        # ends a name.
        ("proceedings series: Proceedings of NAME",
         r"\b(?P<venue>Proceedings of (?:the )?(?![\w&/ -]*\b(?:Conference|Workshop|Symposium|Meeting|"
         r"Congress|Colloquium|Forum|Summit|Convention)\b)"
         rf"[A-Z][a-z]+\b(?: (?:(?!{MONTH}\b)[A-Z][a-z]+\b|of|and|in|for|the|on|&))+)",
         "near"),
        # A proceedings' own line: 'Proceedings of the 38th International Conference on Machine Learning, PMLR
        # 139, 2021', 'Proceedings of the 2021 Conference on Empirical Methods in Natural Language
        # Processing'. The ACL Anthology's footer doubles the article when the name opens with one
        # ('Proceedings of the The 8th International Joint Conference on ...'); 'Annual' is part of a
        # meeting's name ('Annual Meeting of the Association for Computational Linguistics', 'USENIX Annual
        # Technical Conference').
        ("proceedings line",
         rf"\bProceedings of (?:the (?:The )?|The )?{_ORDINAL_WORD}?(?:{_YYYY} )?{_VENUE}", "near"),
        # The ACL Anthology's footer of a meeting named by its acronym and year, the article's pages after it:
        # 'Proceedings of NAACL-HLT 2018, pages 84–91'.
        ("proceedings line: Proceedings of ACRONYM YEAR, pages",
         rf"\bProceedings of (?:the )?(?P<venue>{_MEETING_ACRONYM}) {_YYYY}, pages \d", "group"),
        # The Computer Vision Foundation's watermark: 'This CVPR 2021 paper is the Open Access version'.
        ("open access watermark",
         rf"\bThis (?P<venue>[A-Z][A-Za-z]*[A-Z]\w*) {_YYYY} (?:\w+ )?paper is the Open Access version",
         "group"),
        # The day the article was published, as journals print it beside received and accepted (PLOS, MDPI,
        # Frontiers, Springer: 'Published: 3 February 2021', 'Published online: 12 March 2021'; IEEE: 'date
        # of publication February 1, 2021'): the year alone, when no row above gave one.
        ("publication date",
         rf"(?:\b[Pp]ublished(?: online)?|\b[Dd]ate of publication):? (?:on )?"
         rf"(?:\d{{1,2}} {MONTH},? |{MONTH} \d{{1,2}},? ){_YYYY}", "group"),
        # The year a citation of the article gives it after its authors (PLOS's and Frontiers' 'Citation:
        # Lovelace A, Turing A (2021) Title. PLoS Comput Biol 17(3): e1008736.'), and, last, the year of the
        # authors' copyright where a publisher is named as publishing it ('© The Author(s) 2021. Published by
        # Oxford University Press', '© 2021 by the authors. Licensee MDPI'; a journal's class prints '© The
        # Author 2019.' on a manuscript too): the year alone, when no row above gave one.
        ("citation of the article: Citation: AUTHORS (YEAR)", rf"\bCitation: [^()]{{3,300}}? \({_YYYY}\) ",
         "group"),
        # IOP's cover page cites the article with the year bare between the authors and the journal: 'To cite
        # this article: Longfeng Zhao et al 2018 J. Phys.: Conf. Ser. 1113 012009'.
        ("citation of the article: To cite this article: AUTHORS YEAR JOURNAL",
         rf"\bTo cite this article: [^()\d]{{3,200}}? {_YYYY} (?=[A-Z])", "group"),
        # SAGE's: '© The Author(s) 2020' over 'Article reuse guidelines: sagepub.com/journals-permissions'
        # (before 2017: 'Reprints and permission: sagepub.co.uk/journalsPermissions.nav'), its © in a font
        # whose text is '!' ('! The Author(s) 2020').
        ("the authors' copyright",
         r"(?:©|!(?= The Author\(s\)))\s*(?:(?:The )?[Aa]uthors?(?:\(s\))?,? |"
         r"(?=(?:19|20)\d\d,? (?:by )?[Tt]he [Aa]uthors?\b))"
         + _YYYY + r"(?=.{0,30}?\b(?:Published by [A-Z]|Licensee [A-Z]|Article reuse guidelines|"
         r"Reprints and permissions?:))",
         "group"),
        # A copyright line's year, where no row above gave one; its holder is a publisher, a society or a
        # consortium (AAAI's 'Copyright © 2017, Association for the Advancement of Artificial Intelligence',
        # an ACL proceedings' '© 2017 AFNLP', AAAI Press's '© 1996, AAAI' under 'From: KDD-96 Proceedings', '©
        # 1996 X Consortium'), which owns the rights and names no venue: on the tuning half, the holder taken
        # as the venue was wrong each of the four times a venue came from it. A comma may follow the year.
        ("copyright line: © YEAR, HOLDER", r"©\s*(?P<year>\d{4}),? (?=[A-Z])", "group"),
        # IEEE Xplore's stamp down page 1's margin on a conference paper, the meeting named after its year and
        # before its acronym, the proceedings' ISBN and price after it: '2024 IEEE International Conference on
        # Teaching, Assessment and Learning for Engineering (TALE) | 979-8-3503-7623-4/24/$31.00 ©2024 IEEE',
        # '2019 IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR) | 978-1-...'. The name
        # may hold commas; its ordinal is no part of it ('2019 IEEE 35th International Conference on Data
        # Engineering (ICDE)').
        ("proceedings' ISBN stamp: YEAR MEETING (ACRONYM) | ISBN/YY/$PRICE",
         rf"\b{_YYYY} (?:(?P<body>[A-Z][\w/]*) )?{_ORDINAL_WORD}?(?P<venue>[A-Z][^|()]{{4,200}}?) "
         r"\([A-Z][\w /&-]*\) \| (?:97[89]-)?[\d-]{9,15}/\d\d/\$\d+\.\d\d\b", "group"),
        ("arXiv stamp", rf"arXiv:(?:\d{{4}}\.\d{{4,5}}|[a-z-]+(?:\.[A-Z]{{2}})?/\d{{7}})(?:v\d+)? ?"
                        rf"\[[^\]]+\] ?\d{{1,2}} {MONTH} (?P<year>\d{{4}})", "group"),
    ]]
YEAR_WINDOW = 100
_YEAR = re.compile(r"\b(?:19[4-9]\d|20[0-4]\d)\b")
_CITED_YEAR = re.compile(r"\b(?:19[4-9]\d|20[0-4]\d)(?=[a-z]?\b)")  # a citation's too: '(Hornik, 2005b)'
# Journal names as references abbreviate them or their authors spell them, and their full names.
VENUE_NAMES = {"j. of statistical software": "Journal of Statistical Software",
               "j. stat. softw.": "Journal of Statistical Software",
               "jss": "Journal of Statistical Software",
               "r-news": "R News"}
# A publisher, a society or a company is not where an article appeared ('WILEY-VCH Verlag GmbH & Co.',
# 'Association for Computing Machinery', a copyright's 'The Author(s)'), unless the name is a journal's
# ('Journal of the ... Association').
_PUBLISHER = re.compile(r"\b(?:Verlag|GmbH|KGaA|Inc|Ltd|LLC|Co|Press|Publishers?|Publishing|Association|"
                        r"Authors?|Society|Elsevier|Springer|Wiley|WILEY|Taylor|Francis|ACM|IEEE|Addison|Institute|"
                        r"Foundation|University|Copyright|All|Rights)\b")
_VENUE_WORD = re.compile(r"\b(?:Journal|Transactions|Proceedings|Review|Letters|Annals|Bulletin|Magazine|"
                         r"News|Communications|Conference|Symposium|Workshop|Statistician|Quarterly|Reports?|"
                         r"Analysis|Computing|Software|Statistics|Science|Sciences|Biometrika|Biometrics|"
                         r"Notes)\b")
_MEETING_WORD = re.compile(r"\b(?:Conference|Symposium|Workshop|Congress|Meeting)\b")  # a meeting's word
# A meeting's kind without whose meeting it is ('Annual Meeting', 'International Conference').
_UNNAMED_MEETING = re.compile(r"(?:(?:Annual|International|National|Joint|Regional|Biennial) )*"
                              + _MEETING_WORD.pattern)
# A company's legal form ending a name.
_COMPANY = re.compile(r"\b(?:Co|Ltd|Inc|GmbH|KGaA|LLC|plc|B\.V|S\.A)\.?$")
# The words that make a name with a publisher's word in it a periodical's or a meeting's ('Journal of the
# Association for Computing Machinery', 'Annual Meeting of the Association for Computational Linguistics'); a
# field's name does not ('Association for Computing Machinery').
_PERIODICAL = re.compile(r"\b(?:Journal|Transactions|Proceedings|Review|Letters|Annals|Bulletin|Magazine|"
                         r"News|Communications|Conference|Symposium|Workshop|Meeting|Congress|Quarterly|Notes)\b")
# 'Journal' abbreviated before 'of' ('J. of Statistical Software', 'Jl. of Interactive Learning Research').
_JOURNAL_ABBREVIATION = re.compile(r"^(?:J|Jl|Jnl|Jour|Journ)\.? of\b")
# (nor a volume's or an issue's word: 'Volume 12(1), 12–31' is a citation without its journal)
_NOT_VENUE = re.compile(r"^(?:The|This|These|In|A|An|Our|We|It|Section|Figure|Table|Appendix|Vol|Volume|No|"
                        r"Number|Issue|Pages?|Chapter|Part|Step|Eq|Equation|Fig|Figs|Tables?|Sections?)$")
# A DOI broken at a line's end goes on on the next line: broken after a '/', '.', '-' or '_', and going on in
# lower case or a digit ('doi:10.18637/' / 'jss.v017.i03'); a whole DOI ends its line
# ('doi:10.1093/bioinformatics/btab083' / 'Advance Access ...'). Where the text was flattened the break is a
# space, which only the suffix's whole absence tells ('10.18637/ jss.v017.i03').
_DOI_PART = r"[^\s\"<>,]"
_DOI = re.compile(
    r"(?:doi:\s*|doi\.\s*org/\s*|DOI:?\s+|URL\s+)"
    rf"(10\.\d{{4,9}}/(?:{_DOI_PART}*[./_-]\n\s*(?-i:[a-z\d]){_DOI_PART}*|{_DOI_PART}+|\s+{_DOI_PART}+))",
    re.I,
)
# An arXiv id as printed: 'arXiv:1004.4240', 'arXiv:math/0405482v2' (the old style), or the paper's own
# abstract page ('arxiv.org/abs/1911.06416'): the one rule of kb.papers.identifiers.
ARXIV_ID = identifiers.ARXIV_IN_TEXT


def _flat(text: str) -> str:
    """Text on one line: words hyphenated across a line joined, whitespace collapsed. Between digits the
    hyphen is the text's own (a range, a DOI's 'tb/43-' / '1/...'): kept."""
    text = re.sub(r"(\d)-\n\s*(?=\d)", r"\1-", text)
    return " ".join(re.sub(r"(\w)-\n\s*(\w)", r"\1\2", text).split())


# Words a journal's name in capitals keeps so ('IEEE TRANSACTIONS ON ...'): acronyms of four letters or more
# (shorter words in capitals are acronyms unless small words: 'ACM', 'BMC', 'RNA').
_ACRONYMS = frozenset({"IEEE", "SIAM", "PLOS", "AAAI", "IJCAI", "SPIE", "IFIP", "ASME", "AIAA", "USENIX",
                       "ICML", "ICLR", "NAACL", "EMNLP", "COLING", "SIGKDD", "SIGMOD", "VLDB", "JMLR",
                       "EURASIP"})


def _title_case(name: str) -> str:
    """A name set in capitals ('NATURE COMMUNICATIONS') as it is written ('Nature Communications')."""
    small = {"of", "and", "in", "for", "the", "on", "&"}
    words = []
    for i, word in enumerate(name.split()):
        # two bodies' acronyms ('IEEE/ACM', 'IEEE/CVF') keep their capitals as each would alone
        if all(part in _ACRONYMS or len(part.strip(".")) <= 3 and part.lower() not in small
               for part in word.split("/")):
            words.append(word)
        else:
            words.append(word.lower() if i and word.lower() in small else word.capitalize())
    return " ".join(words)


_ACRONYM_CONFERENCE = re.compile(rf"(?P<acronym>{_ACRONYM}) Conference")
# Bodies whose acronym and 'Conference' name no one meeting.
_SOCIETIES = frozenset({"ACM", "IEEE", "USENIX", "SIAM", "IFIP", "ISCA", "ASME", "SPIE", "AIAA", "IAPR",
                        "ACL"})


def _venue(name: str | None, cited: bool = False) -> str | None:
    """The venue a statement names, or None for a publisher, a society or a word that names nothing.
    ``cited``: the name stands in a citation's shape (see ``_JOURNAL``), which makes one word a name."""
    if not name:
        return None
    # An abbreviated name's last period ends its abbreviation ('Random Struct. Alg.'), not a sentence.
    abbreviated = re.search(r"\b[A-Z][a-z]{1,5}\. (?:[A-Z][a-z]*\.? )*[A-Z][a-z]{1,5}\.$", name.strip(" ,"))
    # a small word, a month or a volume's word the statement ran on into ('... February', 'TUGboat Vol 13(4)')
    name = re.sub(rf"(?:\s+(?:and|of|in|for|the|on|{MONTH}|(?i:vol|volume|no|number|issue|part)\.?))+$", "",
                  name.strip(" .,")).rstrip(" .,")
    # a meeting's year glued to its name ('Proceedings of PracticalTEX2004'): the year is read apart
    name = re.sub(r"(?<=[A-Za-z])(?:19|20)\d\d$", "", name)
    name += "." if abbreviated and name else ""
    if not name:
        return None
    # A statement in capitals read as part of the name ('APPEARED IN BULLETIN OF THE ...'): the name follows.
    name = re.sub(r"^(?:(?:TO )?APPEAR(?:S|ED)?|PUBLISHED|REPRINTED|ACCEPTED) (?:IN|FROM|AT|BY) (?:THE )?",
                  "", name)
    name = VENUE_NAMES.get(name.casefold(), name)
    name = _JOURNAL_ABBREVIATION.sub("Journal of", name)
    if name.isupper() and len(name.split()) > 1:
        name = _title_case(name)
    if _PUBLISHER.search(name) and not _PERIODICAL.search(name) or _COMPANY.search(name):
        return None  # (a company's name is its own, whatever it holds: 'KeAi Communications Co., Ltd.')
    # A meeting's acronym with the generic word, as old proceedings' and IEEE's footers print it
    # ('Proceedings of the 19th VLDB Conference', 'ICDE Conference 2010'): the acronym names it, as the
    # permission block's does. A society's is no meeting's ('ACM Conference', 'IEEE Conference').
    generic = _ACRONYM_CONFERENCE.fullmatch(name)
    if generic and generic.group("acronym") not in _SOCIETIES:
        name = generic.group("acronym")
    words = name.split()
    if words[0] in ("of", "and", "in", "for", "on"):
        return None  # the end of a name whose start was not read ('... A~ociation for Computing Machinery')
    if _PERIODICAL.fullmatch(name) or _UNNAMED_MEETING.fullmatch(name):
        return None  # a kind of venue without its name ('Proceedings' of 'Proceedings of the 58th ...')
    acronym = len(words) == 1 and re.fullmatch(_MEETING_ACRONYM, name) is not None  # 'ICS', 'ESEC/FSE'
    if _NOT_VENUE.match(words[0]) and len(words) == 1 or not (acronym or cited or _VENUE_WORD.search(name)
                                                              or len(words) >= 2):
        return None
    return name


def _year(groups: dict[str, str], rule: str, after: str) -> int | None:
    if "year" in groups:  # a year the statement itself names ('Proceedings of the 2015 ...')
        return int(groups["year"])
    if "yy" in groups:  # the meeting's own two-digit year ('ECOOP '98')
        return int(groups["yy"]) + (1900 if int(groups["yy"]) >= 50 else 2000)
    # a DOI's or a URL's digits are no year ('DOI: 10.6339/21-JDS1030' / 'January 2022')
    near = _CITED_YEAR.search(_DOI_IN_LINE.sub(" ", after[:YEAR_WINDOW])) if rule == "near" else None
    return int(near.group()) if near else None


# A journal's name in a running header or footer ('Communications of the ACM', 'Journal of the ...').
# A book series' name there too, as AMS and Springer print it ('Contemporary Mathematics', 'Lecture Notes in
# Computer Science', 'Advances in ...', 'Studies in ...').
# (a colon may join the name's part: 'Journal of Physics: Conference Series')
_MARGIN_VENUE = re.compile(r"(?P<venue>(?:Journal|Communications|Transactions|Proceedings|Annals|Bulletin|"
                           r"Letters|Contemporary|Lecture Notes|Advances|Studies)"
                           r"(?: (?:of|the|on|for|and|in|[A-Z][\w&-]*)|: [A-Z][\w&-]*)+)")


def read_publication(article: PdfArticle, margins: list[str] | None = None, read: int = 1,
                     stamps: list[str] | None = None) -> None:
    """Venue, year, volume, issue, DOI and arXiv id from the statements of the first ``read`` pages (two
    after a cover page) and of page 1's free-text annotations (``stamps``: 'To appear in OSDI 2006'), page
    1's running header and footer (``margins``), and the reference list."""
    texts = _Texts.of(article, read, stamps)
    if article.title:  # page 1 citing the article itself by its title: the most specific statement
        _self_cited(article, texts.first)
    for name, pattern, rule in PUBLICATION_PATTERNS:
        for match in texts.matches(pattern):
            if _read_statement(article, (name, pattern, rule), match, texts):
                break  # a row's first statement about this article's publication: the row's next are not read
    if article.venue is None and not CLASS_SAMPLE_VENUE.search(texts.first):
        # (a class's sample footer on page 1 makes its margins the template's: 'Leibniz International
        # Proceedings in Informatics' under 'CVIT 2016' names no venue of this manuscript)
        _unstated_venue(article, texts, margins or [], read)
    _meeting_venue(article, margins or [], texts)  # the lexicon of meetings: the venue where none was read
    # The DOI page 1 prints is this document's, before the one its reference list gives its published self:
    # a reprint prints its own ('doi: 10.5300/2022-1-4/49' under 'First published in TUGboat 43:1').
    _printed_doi(article, texts.first)
    if article.doi is None and not _DOI_START.search(article.pages[0] if article.pages else ""):
        _dated_doi(article)
    if article.venue and (article.year is None or article.doi is None) and article.title:
        # the paper citing its published self
        _from_reference(article, _titled(texts.references, article.title))
    article.arxiv_id = own_arxiv_id(texts.first)
    if article.venue is None and article.arxiv_id:
        # A preprint whose page states no other publication appeared on arXiv: its venue is the server, as the
        # user's own notes write it (`venue: "arXiv"`), as a bioRxiv stamp gives "bioRxiv", and as kb's arXiv
        # lookup, BibTeX and CSL imports store it.
        article.venue = "arXiv"


# A sentence pointing to another version of the paper: 'Our full version has been made available at
# https://arxiv.org/abs/2101.12631' (PVLDB), 'An extended version of this paper is arXiv:1234.56789', 'see the
# technical report [arXiv:...]', 'the appendix is in the long version on arXiv'.
_OTHER_VERSION = re.compile(r"\b(?:(?:full|extended|long|longer|complete|technical report|preprint) version|"
                            r"technical report|appendi(?:x|ces)|"
                            r"supplementa(?:ry|l) (?:material|information))\b", re.IGNORECASE)


def own_arxiv_id(text: str) -> str | None:
    """The first arXiv id the text gives this document (a stamp, 'arXiv:2101.12631v2'), not one its sentence
    says is another version's (``_OTHER_VERSION``); None where it gives none."""
    others = other_versions_arxiv_ids(text)
    return next((f.group(1) for f in ARXIV_ID.finditer(text) if f.group(1) not in others), None)


def other_versions_arxiv_ids(text: str) -> set[str]:
    """The arXiv ids the text says are another version's (``_OTHER_VERSION``): not this document's, printed
    or behind a link on the same words."""
    others = set()
    for found in ARXIV_ID.finditer(text):
        sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text[max(0, found.start() - 200):found.start()])[-1]
        if _OTHER_VERSION.search(sentence):
            others.add(found.group(1))
    return others


def _unstated_venue(article: PdfArticle, texts: _Texts, margins: list[str], read: int) -> None:
    """The venue where page 1's statements name none, from the surest source to the least: a version of
    this paper published elsewhere, stated on the next page; a journal or a meeting named in page 1's
    margins; a meeting named alone at its foot; a journal the lexicon knows (then ``_meeting_venue``: a
    meeting the lexicon of meetings knows)."""
    if len(article.pages) > read:
        _earlier_version(article, texts, read)
    if article.venue is None:
        _cites_its_own_title(article, texts)
    if article.venue is None:
        _from_margins(article, margins)
    if article.venue is None:
        _meeting_alone(article, [*margins, *texts.pages.strip().splitlines()[-1:]])
    if article.venue is None:
        _from_lexicon(article, margins, texts.lines, " ".join([texts.first, *map(_flat, article.pages[1:2])]))


@dataclass
class _Texts:
    """The texts a publication is read in: the statements' pages as read (``pages``), their text before the
    reference list flattened (``first``) and line by line (``lines``), and the paper's reference list."""

    pages: str
    first: str
    lines: str
    references: str

    @classmethod
    def of(cls, article: PdfArticle, read: int, stamps: list[str] | None) -> _Texts:
        # A statement about the article never stands in its reference list ('R News, 7(1):24–26, 2007'). A
        # cover sheet's own 'REFERENCES' line (JSTOR's, over 'Linked references are available on JSTOR') heads
        # no list: the article's page after it is read to its own list.
        pages = _unmapped_separators("\n".join([*(stamps or []), *article.pages[:read]]))
        covers = _unmapped_separators("\n".join([*(stamps or []), *article.pages[:read - 1]]))
        own = _unmapped_separators("\n".join(article.pages[read - 1:read]))
        before_references = "\n".join(
            text for text in (covers, re.split(REFERENCES_HEAD, own, maxsplit=1)[0]) if text)
        # A citation's shape is read in the flattened text (a line's end may break it: 'Random Struct.' /
        # 'Alg., 22: 60 – 65, 2002'), then in each line on its own: flattened, a line's last word runs into
        # the name opening the next line, which a citation's name may not follow ('... ac.uk' /
        # 'COMMUNICATIONS BIOLOGY | (2022) 5:312').
        lines = "\n".join(" ".join(line.split()) for line in before_references.splitlines())
        return cls(pages, _flat(before_references), lines, _references("\n".join(article.pages)))

    def matches(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """A row's statements: in the flattened text, then, for a name in a citation's shape, line by line."""
        texts = (self.first, self.lines) if "journal" in pattern.groupindex else (self.first,)
        return itertools.chain.from_iterable(pattern.finditer(text) for text in texts)


# A journal's font may leave its separators without a Unicode map: PNAS's XPP pages before 2011 print the bars
# of their footer ('5258 –5263 | PNAS | March 31, 2009 | vol. 106 | no. 13') and of their keywords line in a
# font whose bar the text gives as a control code ('5258 –5263 \x01 PNAS \x01 March 31, 2009 \x01 vol. 106').
# A control code standing alone between spaces is no text: there it is the separator the page prints.
_CONTROL_CODE = r"[\x00-\x08\x0b\x0c\x0e-\x1f]"  # what the text gives for a glyph without a Unicode map
_UNMAPPED_SEPARATOR = re.compile(rf"(?<= ){_CONTROL_CODE}(?= )")


def _unmapped_separators(text: str) -> str:
    """``text`` with each control code standing alone between spaces (``_UNMAPPED_SEPARATOR``) read as the
    bar it stands for."""
    return _UNMAPPED_SEPARATOR.sub("|", text)


# The publication a LaTeX class prints on its sample article, left on a manuscript built with the class:
# LIPIcs' and OASIcs' '42nd Conference on Very Important Topics (CVIT 2016)', acmart's 'Woodstock '18: ACM
# Symposium on Neural Gaze Detection' and later 'Conference acronym 'XX', IEEEtran's 'JOURNAL OF LATEX CLASS
# FILES, VOL. 14, NO. 8'. A statement naming one states no publication, neither venue nor year.
CLASS_SAMPLE_VENUE = re.compile(r"\bConference on Very Important Topics\b|\bCVIT 2016\b|\bWoodstock ['’]18\b|"
                                r"\bSymposium on Neural Gaze Detection\b|\bConference acronym ['’]XX\b|"
                                r"(?i:\bJournal of LaTeX Class Files\b)")


def _statement_groups(row_name: str, match: re.Match[str], title: str | None,
                      pages: str) -> dict[str, str] | None:
    """A statement's groups that matched, its venue as printed (a citation's journal without the end of the
    title run into it, a name read across a line's end only where the line wraps it); None for a template's
    placeholder or a statement about another work."""
    groups = {k: v for k, v in match.groupdict().items() if v}
    for part in ("year", "issue"):  # a row's second order of its parts ('2/2004' and '2004/2')
        if f"{part}2" in groups:
            groups[part] = groups.pop(f"{part}2")
    if any(re.fullmatch("0+", groups.get(part, "1")) for part in ("volume", "issue")):
        return None  # a template's placeholder ('Vol. 00 no. 00 2012'): no publication
    if CLASS_SAMPLE_VENUE.search(match.group()):
        return None  # a class file's sample publication left on a manuscript ('CVIT 2016'): no publication
    if _about_another(row_name, match) or _printing_place(match):
        return None
    if "journal" in groups:  # a name in a citation's shape (see _JOURNAL)
        head = _colon_head(match.string[max(0, match.start("journal") - 120):match.start("journal")])
        journal = groups.pop("journal")
        groups["venue"] = _after_title(f"{head}: {journal}" if head else journal, title)
    if "venue" in groups:
        groups["venue"] = _on_its_line(groups["venue"], pages)
    if "body" in groups:  # the body holding a meeting, before the ordinal left out ('IEEE 35th ...')
        groups["venue"] = f"{groups.pop('body')} {groups['venue']}"
    return groups


def _read_statement(article: PdfArticle, row: tuple[str, re.Pattern[str], str], match: re.Match[str],
                    texts: _Texts) -> bool:
    """Venue, year, volume and issue from one statement of a row of ``PUBLICATION_PATTERNS``, where the
    article lacks them, and the published version's from the reference list where the statement cites it;
    False when the statement says nothing of this article's publication."""
    name, pattern, rule = row
    groups = _statement_groups(name, match, article.title, texts.pages)
    if groups is None:
        return False
    if name == "submitted to" and IMSART_HEADER.match(match.group()):
        return True  # the class's header, not a statement (see IMSART_HEADER): no venue
    venue = _venue(groups.get("venue"), cited=bool(match.groupdict().get("journal")))  # (see _JOURNAL)
    year = _year(groups, rule, match.string[match.end():])
    if "venue" in groups and venue is None:
        return False  # a publisher or a common word: not this statement
    if article.venue is None and venue is not None:
        # the full name beside the abbreviation on page 1, or in page 2's running header (ACS's)
        article.venue = _unabbreviated(_best_spelling(venue, pattern, groups, article.pages),
                                       " ".join([texts.first, *map(_flat, article.pages[1:2])]))
        article.year = article.year or year
    elif "venue" not in groups:
        article.year = article.year or year
    article.volume = article.volume or groups.get("volume")
    article.issue = article.issue or groups.get("issue")
    if "entry" in groups:  # the published version's whole citation follows the statement
        _from_reference(article, groups["entry"])
    if "cite" in groups and "year" in groups:
        cited = _cited(texts.references, groups["cite"], groups["year"], match.group())
        titled = _titled(texts.references, article.title) if article.title else None
        _from_reference(article, cited or titled)
    return True


# The statements that say a version of this very paper appeared elsewhere, which an introduction may print
# on page 2 ('A previous version of this manuscript was published in the Journal of Statistical Software
# (Hahsler and Hornik 2007).'; 'An earlier version of this paper appeared in ...').
_VERSION_ROWS = ("statement: JOURNAL, No. N, MONTH YEAR", "published in a similar form in CITATION",
                 "version of CITE, published in",
                 "published in / appeared in / accepted in / reprinted from / to appear in")
_OF_THIS_PAPER = re.compile(r"\bversion of (?:this|the present|our) (?:paper|article|manuscript|document|"
                            r"work|report|note|vignette|chapter)\b")


def _earlier_version(article: PdfArticle, texts: _Texts, read: int) -> None:
    """Venue and year from the page after the statements' pages, where a sentence says a version of this
    paper was published (``_VERSION_ROWS``); other statements there are about other works."""
    page = _flat(re.split(REFERENCES_HEAD, article.pages[read], maxsplit=1)[0])
    later = _Texts(article.pages[read], page, page, texts.references)
    for name, pattern, rule in PUBLICATION_PATTERNS:
        if name not in _VERSION_ROWS:
            continue
        for match in pattern.finditer(page):
            sentence = re.split(r"[.!?]\s", page[max(0, match.start() - 160):match.start()])[-1]
            about_this = _OF_THIS_PAPER.search(sentence) or _THIS_PAPER.search(sentence)
            if about_this and _read_statement(article, (name, pattern, rule), match, later):
                return


def _cites_its_own_title(article: PdfArticle, texts: _Texts) -> None:
    """Venue, year and DOI from the reference entry that cites this article's whole title by its first
    author, where page 1 cites that entry ('the BradleyTerry2 package (Turner and Firth 2012)' and 'Turner H,
    Firth D (2012). “Bradley-Terry Models in R: The BradleyTerry2 Package.” Journal of Statistical Software,
    48(9)'): a vignette or a reprint pointing at its own published version, which no statement names."""
    if not article.title or not article.authors or not texts.references:
        return
    surname = article.authors[0][0].split()[-1]
    words = re.findall(r"\w+", article.title)
    flat = _flat(texts.references)
    whole = re.search(r"\W+".join(map(re.escape, words)) + r"(?=\W{0,3}[”\"’.])", flat, re.IGNORECASE)
    if whole is None:
        return
    opening = flat[max(0, whole.start() - 160):whole.start()]  # the entry's authors and year
    year = re.search(r"\(((?:19|20)\d\d)[a-z]?\)\W*$", opening)
    if year is None or not re.search(rf"\b{re.escape(surname)}\b", opening):
        return
    # page 1 cites it by its first author and year ('(Turner and Firth 2012)', 'Turner et al. (2012)')
    cue = rf"\b{re.escape(surname)}\b[\w\s,.&’'-]{{0,60}}?\(?{year.group(1)}[a-z]?\b"
    if re.search(cue, texts.first):
        _from_reference(article, _titled(texts.references, article.title))


# A meeting named alone, with its year, in page 1's header or footer or on its last line: 'EuroTeX 2003',
# 'NDSS '16'. The name has two capitals at least (an acronym, 'EuroTeX'), so that a word and a year ('Page
# 2003', 'Draft 2021') are not one. A proceedings' running footer names its volume so ('EuroTeX’99
# Proceedings', 'Proceedings EuroTeX2005', 'TUG 2004 Proceedings'); there, and only there, a two-digit year
# may be glued to the name ('EuroTEX99 Proceedings', a TeX logo's accent set apart). IEEE's proceedings footer
# puts the generic word between the acronym and the year ('ICDE Conference 2010'): the acronym (see
# ``_venue``).
_MEETING_ALONE = re.compile(r"^\s*(?P<before>Proceedings(?: of)?(?: the)? )?"
                            rf"(?P<venue>{_ACRONYM}(?: Conference)?)"
                            r"(?: ?(?:[’'‘´](?P<yy>\d\d)|"
                            rf" {_YYYY})|(?P<glued>(?:19|20)\d\d)|(?P<glued_yy>\d\d))"
                            r"(?P<after> Proceedings)?\s*$")
# TeX's accents as the extractor sets them apart from their letter, at a line's end ('EuroTEX99 Proceedings´')
_STRAY_ACCENTS = re.compile(r"(?<=\w)[´¨ˆ˜ˇ`]+(?=\s*$)")


def _meeting_alone(article: PdfArticle, lines: list[str]) -> None:
    """The venue and year of a meeting named alone on a line of page 1's margins (see ``_MEETING_ALONE``)."""
    for line in lines:
        alone = _MEETING_ALONE.match(_STRAY_ACCENTS.sub("", line))
        venue = _venue(alone.group("venue")) if alone else None
        if alone and venue and not _PUBLISHER.search(venue):
            groups = {k: v for k, v in alone.groupdict().items() if v}
            if "glued_yy" in groups and not ("before" in groups or "after" in groups):
                continue  # a name and two digits alone ('COVID19') are no meeting's
            if "glued_yy" in groups:
                groups["yy"] = groups.pop("glued_yy")
            year = int(groups["glued"]) if "glued" in groups else _year(groups, "group", "")
            article.venue, article.year = venue, article.year or year
            return


# A component's DOI, the article's with a number after it: eLife's abstract and figures
# ('10.7554/eLife.45968.001'), PLOS's figures ('10.1371/journal.pcbi.1008736.g001').
_COMPONENT = re.compile(r"\.[a-z]?\d{3}$")


_DOI_START = re.compile(r"\b10\.\d{4,9}/")  # a DOI printed whole: its registrant and slash


# The article's own DOI after its dates, labelled: ReScience C's sidebar ('Received 17 February 2020
# Published 24 July 2020 DOI 10.5281/zenodo.3959516'), 'Published: 3 May 2021 | DOI: ...'. A journal that
# publishes through an archive (Zenodo) gives its articles the archive's DOIs: this one is the article's.
_DATED_LABEL = re.compile(r"\b(?:Published|Accepted|Received)\b:?\s+[\w ,.]{0,30}?\b(?:19|20)\d\d\s*[|,;]?\s*"
                          rf"DOI:?\s+(10\.\d{{4,9}}/{_DOI_PART}+)")
# A DOI whose slashes are glyphs without a Unicode map, which the text gives as control codes (PNAS's footer
# before 2011, like its bars: 'www.pnas.org\x01cgi\x01doi\x0110.1073\x01pnas.182234399'): the code after the
# registrant's digits is the DOI's slash.
_UNMAPPED_SLASH_DOI = re.compile(rf"(?i:doi)(?::|{_CONTROL_CODE})?\s?(10\.\d{{4,9}}){_CONTROL_CODE}"
                                 r"([\w.-]*\w)")


def _printed_doi(article: PdfArticle, first: str) -> None:
    """The DOI page 1 prints (``first``: its flattened text), where the article has none and it is no data
    set's (unless the page labels it the article's after its dates, ``_DATED_LABEL``); one whose slash is an
    unmapped glyph (``_UNMAPPED_SLASH_DOI``) where the page prints no DOI whole; a template's placeholder DOI,
    wherever it came from, none."""
    own = {_doi_text(m.group(1)) for m in _DATED_LABEL.finditer(first)}
    printed = [_doi_text(m.group(1)) for m in _DOI.finditer(first)]
    if not _DOI_START.search(first):
        printed = [f"{m.group(1)}/{m.group(2)}" for m in _UNMAPPED_SLASH_DOI.finditer(first)]
    dois = [doi for doi in printed if doi in own or not identifiers.archive_doi(doi)]  # no data set's
    # a component's DOI (see _COMPONENT) where the article's own is printed too
    dois = [doi for doi in dois if not (_COMPONENT.search(doi) and _COMPONENT.sub("", doi) in dois)]
    if dois and article.doi is None:
        # A DOI a narrow column broke where no mark tells it ('.../journal.pcbi.100' / '8736') is the start of
        # the same DOI printed whole elsewhere on the page (PLOS's footer): the whole one.
        article.doi = max((d for d in dois if d.startswith(dois[0])), key=len)
    if article.doi and identifiers.placeholder_doi(article.doi) is not None:
        article.doi = None


# The article's DOI alone on its line under the dates it was received, accepted and published, where page 1
# prints none: AAAS's journals at the article's end (Science: '13 May 2011; accepted 1 September 2011' /
# '10.1126/science.1208351'; Science Advances: 'Submitted ...' / 'Accepted ...' / 'Published ...' /
# '10.1126/sciadv...'). Only date lines stand between (a DOI under prose or a reference is another work's).
_DATED_DOI = re.compile(
    r"^[^\n]*\b(?i:accepted|published|posted)\b[^\n]*\b(?:19|20)\d\d\W*\n"
    r"(?:[^\n]*\b(?i:accepted|published|posted|online|revised)\b[^\n]*\b(?:19|20)\d\d\W*\n){0,2}"
    rf"\s*(?:(?i:doi):?\s*)?(10\.\d{{4,9}}/{_DOI_PART}+)\s*$", re.MULTILINE)


def _dated_doi(article: PdfArticle) -> None:
    """The DOI printed under the article's dates on a later page (see ``_DATED_DOI``), none a data set's."""
    for match in _DATED_DOI.finditer("\n".join(article.pages[1:])):
        doi = _doi_text(match.group(1))
        if not identifiers.archive_doi(doi) and identifiers.placeholder_doi(doi) is None:
            article.doi = doi
            return


_FULL_LINE = 60  # a line this long may have wrapped a name onto the next; a shorter one ended with it
_OPEN_WORDS = ("of", "and", "in", "for", "the", "on", "&")


# What page 1's prose says of other works: a citation in parentheses or brackets ('(Rives et al., PNAS 2021,
# 118, e2016239118)', '(Nature 2021; 596:583)'), and a statement whose subject is not this paper ('ProtTrans
# was published in IEEE Transactions on ...'; 'A shorter version of this paper was published in' is this one).
_IN_PARENTHESES = re.compile(r"[(\[;]\s*(?:[A-Z][\w'’-]+(?: et al\.| (?:and|&) [A-Z][\w'’-]+)?,?\s*)?$")
_PASSIVE = re.compile(r"\b(?:was|were|is|are|been)\s+$")
_THIS_PAPER = re.compile(r"\b(?:[Tt]his|[Oo]ur|[Tt]he present) (?:paper|article|work|manuscript|document|"
                         r"version|chapter|report|study|note)\b")


def _about_another(rule: str, match: re.Match[str]) -> bool:
    """Whether a statement or citation page 1 prints is about another work (see ``_IN_PARENTHESES``), or an
    ordinal event that is no meeting ('the 14th Critical Assessment of Structure Prediction (CASP 2020)')."""
    before = match.string[max(0, match.start() - 120):match.start()]
    if "journal" in match.re.groupindex and _IN_PARENTHESES.search(before):
        return True
    if rule == "meeting: ORDINAL NAME (ACRONYM YEAR)" and not _MEETING_WORD.search(match.group()):
        return True
    stated = re.match(r"(?:[Tt]o be |[Tt]o )?" + _STATEMENT, match.group())
    return bool(stated) and _passive_of_another(before)


def _passive_of_another(before: str) -> bool:
    """Whether the text ``before`` a statement ends in a passive whose subject is not this paper ('ProtTrans
    was published in'; 'A shorter version of this paper was published in' is this one's)."""
    sentence = re.split(r"[.!?]\s", before)[-1]
    return bool(_PASSIVE.search(before)) and not _THIS_PAPER.search(sentence)


# A journal's name holding a colon, its series or part after it: 'Journal of Physics: Conference Series',
# 'Quantum Stud.: Math. Found. (2024) 11:27–67' (Springer's header), 'J. R. Stat. Soc.: Series B', 'Phil.
# Trans. R. Soc. A: Math. Phys. Eng. Sci.'. A citation's shape matches the part after the colon; the part
# before it is the name's head where it is a name of two words or more or an abbreviation ('Citation:' is a
# label).
_COLON_HEAD = re.compile(r"(?<![\w,] )(?<![\w,:])(?P<head>(?:[A-Z]|[a-z][A-Z])[\w&-]*\.?"
                         r"(?: (?:[A-Z][\w&-]*\.?|of|and|in|for|the|on))*): $")


def _colon_head(before: str) -> str | None:
    """The head of a journal's name ending ``before`` with a colon (see ``_COLON_HEAD``), or None. Words in
    capitals before it are another line's, run into it on the flattened page (a logo's 'INSTITUTE FOR
    QUANTUM STUDIES' beside Springer's header): a name's head is in one case."""
    found = _COLON_HEAD.search(before)
    if found is None:
        return None
    words = found.group("head").split()
    capitals = 0
    while capitals < len(words) and words[capitals].isupper() and len(words[capitals]) > 1:
        capitals += 1
    if 2 <= capitals < len(words):
        words = words[capitals:]
    head = " ".join(words)
    named = (len(words) >= 2 or head.endswith(".")) and not _CITE_CUE.match(f"{head.casefold()}:")
    return head if named and words[-1].casefold() not in _LABEL_WORDS else None


# The last words of a label before a colon ('PVLDB Reference Format:', 'Article Information:').
_LABEL_WORDS = frozenset({"format", "information", "keywords", "abstract", "citation", "note", "notes",
                          "article", "paper", "correspondence", "address", "email", "e-mail", "received",
                          "accepted", "published", "editor", "editors", "reference", "references", "type",
                          "category"})


# 'Printed in' alone names where the copies were printed, as publishers' imprints say beside their copyright
# ('Printed in the United Kingdom', 'Printed in Great Britain', 'Printed in The Netherlands'); a statement of
# where the paper appeared says more: 'Reprinted from', 'printed with corrections in', 'first printed in'.
_PRINTED = re.compile(r"(?:[Pp]rinted|PRINTED) (?:in|IN) ")
_PRINTED_WHEN = re.compile(r"\b(?:first|originally|also|later|was|were|been|is|are|be)\s+$", re.IGNORECASE)


def _printing_place(match: re.Match[str]) -> bool:
    """Whether a statement is a printer's imprint ('Printed in the United Kingdom'), which names a place."""
    before = match.string[max(0, match.start() - 40):match.start()]
    return bool(_PRINTED.match(match.group())) and not _PRINTED_WHEN.search(before) and not before.endswith(
        ("Re", "re", "RE"))


def _on_its_line(name: str, text: str) -> str:
    """A name read across a line's end (the page is read flattened) without the next line's words, where the
    line ended with it: 'Accepted for publication in Nature Methods' over 'Ada Lovelace' names 'Nature
    Methods'. A name goes on on the next line after a full line (a footnote's 'Proceedings of the 38th
    International' / 'Conference on Machine Learning') or a small word that leaves it open."""
    # a name the page prints whole on one line too (MDPI's footer, under a sidebar that broke it) is whole
    found = (re.search(r" +".join(re.escape(word) for word in name.split()), text)
             or re.search(r"\s+".join(re.escape(word) for word in name.split()), text))
    if found is None:
        return name
    # The abbreviations that open the name's own line, which the word ending the line above kept out of it
    # ('pubs.acs.org/jcim Article' over 'J. Chem. Inf. Model. 2021, 61, 1234'): the name's first words.
    before = text[text.rfind("\n", 0, found.start()) + 1:found.start()]  # the name's line up to it
    opening = re.fullmatch(r"(?:[A-Z][a-z]{0,5}\. )+", before)
    if "\n" not in found.group():
        return (opening.group() if opening else "") + name
    head = found.group().split("\n")[0].strip()
    line = before + head
    if not head or len(line) >= _FULL_LINE or head.split()[-1].lower() in _OPEN_WORDS:
        return name
    return head


def _best_spelling(venue: str, pattern: re.Pattern[str], groups: dict[str, str], pages: list[str]) -> str:
    """The journal's name as the document spells it most surely, where its journal line (with a volume)
    repeats on other pages: a scan's text layer misreads a word on one page ('Journal of the Assccktion
    for ...') and not on another. Each reading is scored by its rarest word's count in the whole text (a
    misread word stands nowhere else); the first page's reading wins a tie."""
    if "volume" not in groups:
        return venue
    full = _flat("\n".join(pages))
    readings = [venue]
    for match in pattern.finditer(full):
        if match.groupdict().get("volume") == groups["volume"] and match.groupdict().get("venue"):
            reading = _venue(match.group("venue")) or venue
            if _same_name_misread(reading, venue):
                readings.append(reading)

    def sureness(reading: str) -> int:
        return min((full.count(w) for w in re.findall(r"[A-Za-z]{4,}", reading)), default=0)

    return _mended(max(readings, key=sureness), full)  # max keeps the first of equals: page 1's


# A word a scan's text layer may have misread: a capitalised word of six letters or more.
_MISREAD_CANDIDATE = re.compile(r"[A-Z][a-z]{5,}")


def _mended(venue: str, full: str) -> str:
    """A journal line's name with each word a scan's text layer misread spelled as the document spells it
    elsewhere: 'Jouraal of the Amociation for Computing Machinery' (JACM's footnote on a 1976 scan) is the
    'Journal' and the 'Association' of its other pages. A word is taken for misread only where it stands
    nowhere else in the document, no journal's name in the lexicon (``kb.papers.journals``) holds it, and
    exactly one word of the document that the lexicon's names hold is within two letters of it; a real
    name's word the lexicon holds ('Biometrics' beside a cited 'Biometrika') is never respelled."""
    words = venue.split()
    if not any(_MISREAD_CANDIDATE.fullmatch(word) for word in words):
        return venue  # (no word to mend: the document's words are not counted)
    counts = Counter(word.casefold() for word in re.findall(r"[A-Za-z]+", full))
    for at, word in enumerate(words):
        folded = word.casefold()
        if not _MISREAD_CANDIDATE.fullmatch(word) or counts.get(folded, 0) > 1:
            continue
        near = [other for other in counts
                if other != folded and abs(len(other) - len(folded)) <= 2 and _within_two(other, folded)]
        if not near:
            continue
        known = _lexicon_words()
        near = [other for other in near if other in known]
        if folded not in known and len(near) == 1:
            words[at] = near[0].capitalize()
    return " ".join(words)


def _within_two(a: str, b: str) -> bool:
    """Whether two words are at most two edits (a letter inserted, dropped or changed) apart."""
    previous = list(range(len(b) + 1))
    for i, letter in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (letter != other)))
        if min(current) > 2:
            return False
        previous = current
    return previous[-1] <= 2


@cache
def _lexicon_words() -> frozenset[str]:
    """Every word of the lexicon's journal names (about 23,000), read once, when a word may be misread."""
    return frozenset(word for key, _ in journals.lexicon().entries() for word in key.split())


def _same_name_misread(reading: str, venue: str) -> bool:
    """Whether two readings of a journal line's name may be one name, a word misread in one of them: as
    many words, at most half of them different ('Journal of the Assccktion for Computing Machinery' and
    'Journal of the Association for Computing Machinery'). A name read from the middle of a misread word
    ('on for Computing Machinery' out of 'A~ociation for Computing Machinery') or another journal is not."""
    ours, theirs = venue.split(), reading.split()
    differ = sum(a != b for a, b in zip(ours, theirs, strict=True)) if len(ours) == len(theirs) else len(ours)
    return 2 * differ <= len(ours)


def _unabbreviated(venue: str, first: str) -> str:
    """The journal's full name where the page prints it beside its abbreviation: the full name the lexicon
    (``kb.papers.journals``) gives the abbreviation, printed anywhere on the page ('PLoS Comput Biol' and
    'PLoS Computational Biology'); or, for a journal the lexicon lacks, a name whose words the abbreviation's
    open (Springer's header: 'J. Cryptology (1988) 1:65-75 Journal of Cryptology'; Science's 'Sci. Adv.' under
    'SCIENCE ADVANCES'): each abbreviated word ('J.') opens a word of the full name, every other word is the
    same, in order, with small words between them ('of'). Else as printed: a venue is named as the page's text
    names it (the corpus' truth files' convention: 'Random Struct. Alg.', 'PNAS'); a one-word name set in
    capitals as the lexicon writes that very name ('SCIENCE' in Science's footer: 'Science'; an acronym the
    lexicon writes in capitals stays so)."""
    spelled = _printed_full_name(venue, first) or _spelled_out(venue, first)
    if spelled is not None:
        return spelled
    words = venue.split()
    written = journals.full_name(venue) if len(words) == 1 and venue.isupper() else None
    if written is not None and journals.name_key(written) == journals.name_key(venue):
        return written
    if not any(w.rstrip(":").endswith(".") for w in words):
        return venue
    # (a colon after a word stays after its full form: 'Quantum Stud.: Math. Found.', 'Quantum Studies:
    # Mathematics and Foundations')
    bare = [w.rstrip(":") for w in words]
    parts = [(rf"{re.escape(b[:-1])}\w*" if b.endswith(".") else re.escape(b))
             + (":" if w.endswith(":") else "") for w, b in zip(words, bare, strict=True)]
    full = re.search(r"\b" + r" (?:(?:of|the|and|in|on|for|&) )*".join(parts) + r"\b(?!\.)", first,
                     re.IGNORECASE)
    if full is None:
        return venue
    return _title_case(full.group()) if full.group().isupper() else full.group()


def in_full(venue: str | None, subject: str) -> str | None:
    """An abbreviated venue ('Quantum Stud.: Math. Found.') by the full name the document's information gives
    its journal where the page prints only the abbreviation: Springer writes 'Quantum Studies: Mathematics and
    Foundations, https://doi.org/10.1007/...' into the Subject, Elsevier 'Journal of Molecular Biology, 433
    (2021) 167208. doi:...'. The name is taken only where the abbreviation's words open its words in order
    (see ``_unabbreviated``): a Subject that is a TeX stamp or a keyword list names nothing so."""
    return _unabbreviated(venue, subject) if venue and subject else venue


def _printed_full_name(venue: str, first: str) -> str | None:
    """The full name of the journal the lexicon knows ``venue`` by, where the page (``first``) prints it, as
    it prints it (in capitals: as the name is written); None where the lexicon knows no other name for it or
    the page does not print that one."""
    full = journals.full_name(venue)
    if full is None or journals.name_key(full) == journals.name_key(venue):
        return None
    words = [r"(?:&|and)" if w in ("&", "and") else re.escape(w) for w in full.split()]
    found = re.search(r"\b" + r"[\s,.:;-]+".join(words) + r"(?!\w)", first, re.IGNORECASE)
    if found is None:
        return None
    return _title_case(found.group()) if found.group().isupper() else found.group()


# A run of a name's words on a line: capitalised words with the small words between them, up to punctuation,
# a number or a word in lower case.
_NAME_RUN = re.compile(r"[A-Z][\w&-]*(?: (?:(?:of|the|and|on|for|in) )*[A-Z][\w&-]*)*")


def _spelled_out(venue: str, first: str) -> str | None:
    """The name an acronym stands for, where the page prints it: 'PRL' beside 'PHYSICAL REVIEW LETTERS' in
    APS's header, 'PVLDB' (its reference format) and 'Proceedings of the VLDB Endowment' (its footer), 'JMLR'
    and 'Journal of Machine Learning Research'. The acronym is the initials of the name's words (an acronym
    among them stands for itself: 'VLDB'), the last word's left out or not (an acronym is not: 'Proc Natl Acad
    Sci USA' in a reference is no spelling of 'PNAS'); the name is a periodical's ('Journal', 'Letters',
    'Proceedings'). An acronym and a generic word after it ('ICDE Conference') are no spelling. None where no
    name on the page spells it."""
    if not re.fullmatch(r"[A-Z]{2,6}", venue):
        return None
    for run in _NAME_RUN.findall(first):
        words = [w for w in run.split() if w not in ("of", "the", "and", "on", "for", "in")]
        if len(words) < 2 or not _PERIODICAL.search(_title_case(run) if run.isupper() else run):
            continue
        capitals = run.isupper()
        pieces = [w[0] if capitals or not w.isupper() else w for w in words]
        if pieces[:-1] == [venue]:
            continue  # the acronym and one word ('ICDE Conference 2010' in IEEE's footer) spell out nothing
        if venue == "".join(pieces) or venue == "".join(pieces[:-1]) and not words[-1].isupper():
            return _title_case(run) if capitals else run
    return None


def _after_title(name: str, title: str | None) -> str:
    """A journal's name without the end of the article's title that a citation in title case ran into it
    ('... Encode Contacts. Int. J. Mol. Sci. 2021, 22, 1234': 'Int. J. Mol. Sci.')."""
    words = re.findall(r"\w+", title or "")
    for start in range(len(words)):
        # the title's end closed by its punctuation ('Contacts.'), never a word the name shares ('R News')
        ran = re.match(r"\W*".join(map(re.escape, words[start:])) + r"[^\w\s]+\s+", name, re.IGNORECASE)
        if ran:
            return name[ran.end():]
    return name


def _self_cited(article: PdfArticle, first: str) -> None:
    """Venue and year from page 1 citing the article itself, as APA styles it in a footer or a header ('Lee,
    J. J. & Hammer, J. (2011). TITLE. Academic Exchange Quarterly, 15(2).'; without a volume, a DOI or the
    end of the text closes the journal's name: '(2011). TITLE. Information Processing and Management.
    doi:10.1016/...')."""
    assert article.title is not None
    title = r"\W+".join(map(re.escape, re.findall(r"\w+", article.title)))
    cited = re.search(rf"\({_YYYY}\)\. {title}\W* {_JOURNAL}(?:,? (?P<volume>\d+)"
                      r"(?:\((?P<issue>\d+)\))?|(?= (?:doi|DOI|https?:)|\s*$))", first, re.IGNORECASE)
    venue = _venue(cited.group("journal"), cited=True) if cited else None
    if cited and venue:
        article.venue, article.year = venue, article.year or int(cited.group("year"))
        article.volume = article.volume or cited.group("volume")
        article.issue = article.issue or cited.group("issue")
        return
    chapter = re.search(rf"(?:\(|\b){_YYYY}(?:\)\.?|\.)\s*[“\"‘']?{title}\W*\s*{_IN_BOOK}", first,
                        re.IGNORECASE)
    book = _venue(_meeting_of(chapter.group("book"))) if chapter else None
    if chapter and book:
        article.venue, article.year = book, article.year or int(chapter.group("year"))


# ACM's reference format cites a paper in proceedings by the meeting's acronym and year, a colon and the
# meeting's name, dates and place: 'In ICS ’18: 2018 International Conference on Supercomputing, June 12–15,
# 2018, Beijing, China.', 'In KDD ’19: The 25th ACM SIGKDD Conference on Knowledge Discovery and Data Mining,
# August 4–8, 2019, Anchorage, AK, USA.', 'In LAK25: The 15th International Learning Analytics and Knowledge
# Conference'.
_ACRONYM_AND_YEAR = re.compile(rf"(?P<acronym>{_MEETING_ACRONYM}) ?[’'‘]?\d{{2}}: ")


def _meeting_of(book: str) -> str:
    """The meeting's acronym where a citation's book opens with it and its year (``_ACRONYM_AND_YEAR``), as
    the conference line of the permission block names it; else the book as cited."""
    meeting = _ACRONYM_AND_YEAR.match(book)
    return meeting.group("acronym") if meeting else book


# An edited book a chapter appeared in, as a citation of the chapter names it after the chapter's title: APA's
# 'In D. H. Spieler & E. Schumacher (Eds.), New Methods in Cognitive Psychology (pp. 4–31).', Harvard's 'In:
# Spieler, D. H. (ed.) New Methods in ...', Chicago's 'In New Methods in ..., edited by D. H. Spieler and E.
# Schumacher, 4–31.' The book's title, in sentence or title case, runs to its period or its pages.
_IN_BOOK = (r"In:? (?:[^()]{2,150}? \((?i:eds?)\.\),? )?(?P<book>[A-Z][^.()]{2,150}?)"
            r"(?:,? edited by [^,.]+(?:\.[^,.]+)*?)?(?: \(pp?\. ?[^)]*\)|,? (?:pp?\. ?)?\d+ ?[–-] ?\d+)?\.")


# A meeting named after its year in a running footer ('USENIX Association  2013 USENIX Annual Technical
# Conference (USENIX ATC ’13)  49') or header ('2021 IEEE/CVF International Conference on Computer Vision
# (ICCV)'): the year is the meeting's.
_MARGIN_MEETING = re.compile(rf"\b{_YYYY} {_VENUE}")


# A meeting named after its ordinal, ending a running header ('Third IEEE International Symposium on
# Dependable, Autonomic and Secure Computing'): commas may stand inside the name.
_MARGIN_ORDINAL_MEETING = re.compile(rf"\b{_ORDINAL_WORD}(?P<venue>(?:[A-Z][\w&-]*,?|of|and|in|for|the|on)"
                                     r"(?: (?:[A-Z][\w&-]*,?|of|and|in|for|the|on))*)\s*$")


# A citation in parentheses with a year ('(Skinner, 1958)', '(Pressey 1926; Skinner 1958b)').
_CITATION_YEAR = re.compile(r"\([^()]*?[A-Za-z][^()]*?\b(?:19|20)\d\d[a-z]?\)")


# A reader's copy stamped with the day it was saved: IOP's 'This content was downloaded from IP address ... on
# 20/06/2025', OUP's 'Downloaded from https://academic.oup.com/... by guest on 12 March 2024', Science's
# 'Downloaded from https://www.science.org at ... on January 21, 2025', Taylor & Francis' 'Downloaded by
# [University of X] at 09:06 20 June 2025', JSTOR's 'This content downloaded from 128.0.0.1 on Mon, 20 Jun
# 2025'.
_DOWNLOAD_STAMP = re.compile(r"\b(?i:downloaded) (?:from|by|on|at)\b")


# A margin's line ending in a word that joins a name's parts: the name goes on over the next line.
_OPEN_NAME_END = re.compile(r"(?:\b(?:of|the|and|in|for|on)|&)\s*$")


def _going_on(line: str, page: str) -> str:
    """A margin's line whose name ends open ('Journal of Inequalities in Pure and', JIPAM's header over
    'Applied Mathematics'), with the line under it in the page's text; any other line as it is."""
    if not _OPEN_NAME_END.search(line):
        return line
    lines = [text.strip() for text in page.splitlines()]
    at = next((i for i, text in enumerate(lines) if text == line.strip()), None)
    return f"{line.strip()} {lines[at + 1]}" if at is not None and at + 1 < len(lines) else line


# The words a margin's journal name may open with before its periodical's word: capitalised words (an
# adjective, a place, a society's acronym), 'and' or '&' between them ('Australian and New Zealand').
_WORDS_BEFORE = re.compile(r"(?:(?<![\w&-])[A-Z][\w&-]*(?: (?:and|&))? )+$")


def _with_words_before(venue: str, before: str) -> str:
    """A margin's journal name (``_MARGIN_VENUE`` opens it at its periodical's word) with the words before it
    on its line that open the journal's name, where the lexicon (``kb.papers.journals``) knows the longer
    name:
    'Scandinavian' in '© Board of the Foundation of the Scandinavian Journal of Statistics 2002', 'EURASIP' in
    'Hindawi Publishing Corporation EURASIP Journal on Advances in Signal Processing'. The longest such name
    wins; a name the lexicon does not know keeps the periodical's word first (a running head's author or a
    publisher before it is no part of it)."""
    run = _WORDS_BEFORE.search(before.rstrip() + " ")
    if run is None:
        return venue
    words = run.group().split()
    for start in range(len(words)):
        if words[start] in ("and", "&"):
            continue
        longer = " ".join([*words[start:], venue])
        if journals.full_name(longer) is not None:
            return _title_case(longer) if longer.isupper() else longer
    return venue


# The header the IMS class (imsart) prints on every build with a journal's option until the paper is accepted:
# 'Submitted to the Annals of Applied Probability' (the Annals' four journals, Bernoulli, Statistical
# Science), with its placeholder 'arXiv: arXiv:0000.0000' under it. It says which option built the page, not
# where the paper appeared: no venue, from the statement or from the journal it names in the margin.
IMSART_HEADER = re.compile(r"Submitted to (?:the )?(?:Annals of (?:Statistics|Applied Probability|"
                           r"Probability|Applied Statistics)|Bernoulli|Statistical Science)\b")


def _from_margins(article: PdfArticle, margins: list[str]) -> None:
    """A journal named in page 1's header or footer, with a year printed in the same band; else a meeting
    named after its year there, or after its ordinal at a header's end. A name broken over the header's lines
    is read whole (``_going_on``); imsart's submission header (``IMSART_HEADER``) names none."""
    margins = [line for line in margins if not IMSART_HEADER.search(line)]
    margins = [_going_on(line, article.pages[0]) for line in margins] if article.pages else margins
    for line in margins:
        match = _MARGIN_VENUE.search(line)
        venue = _venue(match.group("venue")) if match else None
        if match is not None and venue is not None:
            article.venue = _with_words_before(venue, line[:match.start("venue")])
            # a citation's year in a body line the margin took in is another work's ('(Skinner, 1958)'), and a
            # download stamp's the day a reader saved the copy
            years = [int(y.group()) for text in margins if not _DOWNLOAD_STAMP.search(text)
                     for y in _YEAR.finditer(_CITATION_YEAR.sub(" ", text))]
            article.year = article.year or (years[0] if years else None)
            return
    for line in margins:
        for meeting in _MARGIN_MEETING.finditer(line):
            venue = _venue(meeting.group("venue"))
            if venue is not None and _MEETING_WORD.search(venue):
                article.venue, article.year = venue, article.year or int(meeting.group("year"))
                return
    for line in margins:
        ordinal = _MARGIN_ORDINAL_MEETING.search(line)
        venue = _venue(ordinal.group("venue").rstrip(",")) if ordinal else None
        if venue is not None and _MEETING_WORD.search(venue):
            article.venue = venue
            return


# -- a journal the lexicon names where a page names its own journal -------------------------------------

# What follows a journal's name in a citation of the article: its year and volume ('Genes 2014, 5, 254';
# 'Nucleic Acids Res. 2005; 33(2)'; Medline's 'Genome Res 2011 Jan;21(1)'; 'BMC Bioinformatics (2021)
# 22:123'; a running footer's 'JOURNAL | (2022) 5:312'), its volume and pages ('PLoS Comput Biol 7(12):
# e1002195', 'Nature 596, 583', 'Bioinformatics, 37(15), 2021'), its volume and the volume's year ('Journal of
# Molecular Biology 433 (2021) 167208'), or 'Vol. N'; and a year or a DOI within the line. A year alone is no
# citation ('Artech House, Boston, 1991').
_CITATION_AFTER = re.compile(
    rf"^\s*[.,;:|]?\s*(?:\(?(?:19|20)\d\d\)?[;,]?\s*(?:{MONTH}\s*(?:\d{{1,2}}\s*)?[;,]?\s*)?(?i:vol(?:ume)?\.?\s*)?\d|"
    r"(?i:vol(?:ume)?)\.?\s*\d|\d{1,4}\s*(?:\(\d+\))?\s*[:,;]\s*[A-Za-z]{0,2}\d|\d{1,4}\s*\((?:19|20)\d\d\))")
# A capitalised word or a name's small word just before a name, with no punctuation between: the name is the
# end of a longer one the lexicon does not hold ('Interactive Learning Research', 'An International Journal').
_NAME_GOES_ON = re.compile(r"(?:\b[A-Z][\w&'’-]*|\b(?:of|and|the|for|in|on)|&)\s+$")
# A volume of zeros after the name: a journal's template on a manuscript, not a publication.
_PLACEHOLDER_VOLUME = re.compile(r"^\W*(?:(?i:vol(?:ume)?)\.?\s*)?0+\b")
_YEAR_OR_DOI = re.compile(rf"{_YEAR.pattern}|\b10\.\d{{4,9}}/")
_DOI_IN_LINE = re.compile(r"\b10\.\d{4,9}/\S+|https?://\S+")  # whose digits are no year
# Where a page cites the article itself: 'Cite this: ...', 'Citation: ...', 'To cite this article: ...'.
_CITE_CUE = re.compile(r"\b(?:[Cc]ite this(?: article)?|CITE THIS(?: ARTICLE)?|[Cc]itation|CITATION|"
                       r"[Cc]ite as|[Hh]ow to cite)\b\s*:")
# Words that, all of a name's words among them, make a name no sign of a journal without a citation's shape
# ('Technical Report', 'Computer Science', 'Machine Learning' are journals' names, and a page's words too).
_GENERIC_WORDS = frozenset({"technical", "report", "reports", "computer", "science", "sciences", "machine",
                            "learning", "research", "article", "articles", "original", "open", "access",
                            "letters", "review", "reviews", "communications", "preprint", "proceedings",
                            "methods", "data", "news", "notes", "papers", "abstracts", "and", "of", "in"})


def _from_lexicon(article: PdfArticle, margins: list[str], lines: str, text: str) -> None:
    """The venue from a journal the lexicon (``kb.papers.journals``) names where a page names its own journal,
    when no statement named one: in page 1's header or footer (``margins``) or in the statements' pages'
    ``lines`` before the reference list. A name is about this article when a citation's shape follows it
    (``_CITATION_AFTER``) and it opens its line, stands in a margin or above the title, or follows 'Cite
    this:'; or when it is a margin's or a line above the title's whole text. A name in prose, an affiliation
    ('Department of Bioinformatics') or another work's citation ('(Nature 596, 583 (2021))') is not; nor is a
    common word ('Genes', 'Cell', 'Bioinformatics') without a citation's shape. The venue is named as the
    page names it (``_journal_spelling``)."""
    page = lines.splitlines()
    above = _title_line(page, article.title)
    for line, placed in [*((m, True) for m in margins), *((p, i < above) for i, p in enumerate(page))]:
        for mention in journals.mentions(line):
            if _names_this_article(mention, line, placed):
                article.venue = _journal_spelling(mention, text)
                # the year its citation gives, where no statement gave one ('Genes 2014, 5, 254-270')
                cited = _YEAR.search(_DOI_IN_LINE.sub(" ", line[mention.end:])[:80])
                article.year = article.year or (int(cited.group()) if cited else None)
                return


def _title_line(lines: list[str], title: str | None) -> int:
    """The index of the line that opens the article's title (0 when it is not found: no line is above it)."""
    words = re.findall(r"\w+", title or "")[:4]
    if not words:
        return 0
    opening = re.compile(r"\W+".join(map(re.escape, words)), re.IGNORECASE)
    return next((i for i, line in enumerate(lines) if opening.search(line)), 0)


def _names_this_article(mention: journals.Mention, line: str, placed: bool) -> bool:
    """Whether a journal named in ``line`` is this article's (see ``_from_lexicon``); ``placed``: the line is
    a margin's or above the title."""
    before, after = line[:mention.start], line[mention.end:]
    cue = _CITE_CUE.search(before) is not None
    if _IN_PARENTHESES.search(before) or (re.search(r"\bet al\.,?\s*$", before) and not cue):
        return False  # another work's citation
    words = journals.name_key(mention.printed).split()
    stated = re.search(rf"(?i:{_STATEMENT}(?:the )?)$", before) is not None  # 'APPEARED IN BULLETIN OF ...'
    if len("".join(words)) < 3 or _NAME_GOES_ON.search(before) and not stated:
        return False  # an initial ('J.'), or the end of a longer name ('The Bell System Technical Journal')
    if _PLACEHOLDER_VOLUME.match(after):
        return False  # a journal's template on a manuscript ('BIOINFORMATICS Vol. 00 no. 00 2012')
    if _CITATION_AFTER.match(after) and _YEAR_OR_DOI.search(after[:80]):
        return placed or not before.strip() or cue
    alone = not before.strip(" |") and not re.sub(r"[\s|\d]", "", after)  # beside a page number at most
    # a publisher or a society the lists hold beside its journals ('American Mathematical Society') names no
    # journal alone; with a citation's shape its journals are named ('IEEE Access 2021, 9, 12345')
    publisher = _PUBLISHER.search(mention.journal) and not _PERIODICAL.search(mention.journal)
    return placed and alone and len(words) > 1 and not set(words) <= _GENERIC_WORDS and not publisher


def _journal_spelling(mention: journals.Mention, text: str) -> str:
    """The journal's name as the page's ``text`` prints it, as the rules' venues are (``_unabbreviated``):
    its full name where printed ('The American Statistician'; a sentence's period after it is not part of
    it), else the abbreviation as printed ('Nucleic Acids Res.'); a name in capitals as it is written."""
    printed = mention.printed
    if journals.name_key(printed) == journals.name_key(mention.journal):
        printed = printed.rstrip(".")
    elif (spelled := _unabbreviated(printed, text)) != printed:
        return spelled
    return _title_case(printed) if printed.isupper() and len(printed.split()) > 1 else printed


# -- a meeting the lexicon of meetings names where a page names its own meeting ---------------------------

# Where a page says it appeared at a meeting, just before the meeting's name: 'Published as a conference paper
# at', 'Accepted to', 'To appear in', 'Appearing in', 'In Proceedings of the 37th', 'Companion of the 2019',
# 'Published in Proc. 19th' ('presented at' names where an earlier version was read, as in ``_STATEMENT``;
# 'submitted to' and 'under review at' name no publication).
_MEETING_CUE = re.compile(
    r"(?:\b(?:[Pp]ublished|PUBLISHED|[Aa]ccepted|ACCEPTED|[Aa]ppear(?:s|ed|ing)?|APPEAR(?:S|ED|ING)?)"
    r"(?: for publication)?(?: as an?(?: [\w-]+){0,2} (?:paper|version|contribution|talk|poster|article))?"
    r"(?: (?:at|in|to|by|for|AT|IN|TO))?|"
    r"\b(?:[Pp]roceedings|PROCEEDINGS|Companion(?: Proceedings)?) (?:of|OF)|\b(?:[Pp]roc|PROC)\.(?: of)?)"
    rf"(?: (?:the|The|THE))?(?: {_ORDINAL})?(?: (?:19|20)\d\d)?:?\s*$")
# A line holding an institution, where a meeting's name is a department's or a lab's ('Laboratory for
# Computational Linguistics'), not a statement. (Narrower than pdf_names.INSTITUTION, which takes 'Research'
# and 'Sciences' in: 'Proceedings of Machine Learning Research' is no affiliation.)
_AFFILIATION = re.compile(r"\b(?:Universi|Department|Dept\.|Institut|Laborator|School of|College|Faculty|"
                          r"Hospital|Inc\b|Corporation)", re.IGNORECASE)
# A proceedings' footer in IEEE's or ACM's form: its ISBN and price, or the body's copyright ('978-1-7281-
# 0858-2/19/$31.00 ©2019 IEEE').
_PROCEEDINGS_FOOTER = re.compile(r"/\$\d+\.\d\d\b|©\s*(?:19|20)\d\d\s+(?:IEEE|ACM)\b")
# A line saying the paper is not (yet) published where it names a meeting: 'Under review as a conference paper
# at ICLR 2023', 'Submitted to NeurIPS 2021', 'Paper under double-blind review', 'Do not distribute'.
_UNPUBLISHED = re.compile(r"\b(?:under (?:\w+[ -])?review|submitted|submission|do not distribute|"
                          r"anonymous)\b", re.IGNORECASE)
# A meeting's dates opening a line: its days and month, and its year after them ('30 August – 3 September,
# 2021, Brno', 'August 4–8, 2019, Anchorage').
_MEETING_DATES = re.compile(rf"^\s*(?:\d{{1,2}}(?:\s*[–-]\s*\d{{1,2}})? {MONTH}|{MONTH} \d{{1,2}})\b"
                            r".{0,40}?\b(?:19|20)\d\d\b")
# An acronym opening a permission block's line, its year and a comma after it ('KDD ’19, August 4–8').
_BLOCK_AFTER = re.compile(r"^\s*(?:[’'‘]?\d\d|(?:19|20)\d\d)?\s*,")
_IN_PARENTHESES_AFTER = re.compile(r"^\s*\(([^()]{3,40})\)")


def _meeting_venue(article: PdfArticle, margins: list[str], texts: _Texts) -> None:
    """The lexicon of meetings' one say in the venue: where no rule named one, a meeting page 1 names as its
    own (``_from_meetings``). (A statement's span running on past a meeting's acronym, 'ICS ’18: 2018
    International Conference on ...' or 'VLDB Conference', is cut to the acronym by ``_venue``'s grammar.)"""
    if article.venue is None:
        _from_meetings(article, margins, texts)


def _from_meetings(article: PdfArticle, margins: list[str], texts: _Texts) -> None:
    """The venue from a meeting the lexicon of meetings (``kb.papers.conferences``) names where a page names
    its own meeting, when no statement and no journal named one; its year where none was read. A mention is
    about this article by its shape or its place: opening a line with its year and a comma (an ACM
    permission block's 'KDD '19, August 4-8, 2019, Anchorage'); a full name on a line of an IEEE or ACM
    proceedings' footer or the line above it; after a statement about this paper ('Accepted to NAACL-HLT
    2019', 'In Proceedings of the 37th International Conference on Machine Learning'); a full name with its
    acronym and year after it ('35th Conference on Neural Information Processing Systems (NeurIPS 2021)');
    or anywhere on a line of page 1's header or footer (``margins``: 'Workshop track - ICLR 2018') or above
    the title that names no institution and no review ('Under review as a conference paper at ICLR 2023'). A
    meeting in prose ('the ACL 2020 shared task'), an affiliation or another work's citation is not; nor is
    an acronym without its year (see ``conferences.mentions``)."""
    page = texts.lines.splitlines()
    for index, line in enumerate(page):
        footer = _PROCEEDINGS_FOOTER.search(" ".join(page[index:index + 2]))
        for mention in conferences.mentions(line):
            after = line[mention.end:]
            # (or the acronym and its year are the line's whole text, over the meeting's dates and place:
            # ISCA's 'INTERSPEECH 2021' / '30 August – 3 September, 2021, Brno, Czechia')
            opens_block = not line[:mention.start].strip() and (_BLOCK_AFTER.match(after) or (
                mention.year is not None and re.fullmatch(r"\W*(?:19|20)?\d\d\s*", after) is not None
                and index + 1 < len(page)
                and _MEETING_DATES.match(page[index + 1]) is not None))
            if mention.by_acronym and opens_block or footer and not mention.by_acronym:
                _take_meeting(article, mention, after)
                return
    for mention in conferences.mentions(texts.first):
        before, after = texts.first[:mention.start], texts.first[mention.end:]
        if _stated_meeting(before) or _spelled_with_acronym(mention, after):
            _take_meeting(article, mention, after)
            return
    above = _title_line(page, article.title)
    for line in [*margins, *page[:above]]:
        if _AFFILIATION.search(line) or _UNPUBLISHED.search(line):
            continue
        for mention in conferences.mentions(line):
            _take_meeting(article, mention, line[mention.end:])
            return


def _stated_meeting(before: str) -> bool:
    """Whether the text ``before`` a meeting's name ends in a statement that this paper appeared there
    (``_MEETING_CUE``), not that another work did ('ProtTrans was published in', '(Smith et al., ...')."""
    cue = _MEETING_CUE.search(before)
    if cue is None:
        return False
    ahead = before[max(0, cue.start() - 160):cue.start()]
    return not _IN_PARENTHESES.search(ahead) and not _passive_of_another(ahead)


def _spelled_with_acronym(mention: conferences.Mention, after: str) -> bool:
    """Whether a meeting's full name has its own acronym and year in parentheses after it ('Conference on
    Neural Information Processing Systems (NeurIPS 2021)'), as a proceedings' footnote names it."""
    parenthesised = _IN_PARENTHESES_AFTER.match(after)
    return not mention.by_acronym and parenthesised is not None and any(
        found.by_acronym and found.acronym == mention.acronym
        for found in conferences.mentions(parenthesised.group(1)))


def _take_meeting(article: PdfArticle, mention: conferences.Mention, after: str) -> None:
    """The venue a mention names, as printed (a name in capitals as it is written), and its year where none
    was read: the year printed with its acronym, or the first after its name (its acronym's, a proceedings'
    date)."""
    printed = mention.printed
    article.venue = _title_case(printed) if printed.isupper() and " " in printed else printed
    year = mention.year
    if year is None:
        near = _YEAR.search(_DOI_IN_LINE.sub(" ", after[:YEAR_WINDOW]))
        year = int(near.group()) if near else None
    article.year = article.year or year


def _doi_text(raw: str) -> str:
    return re.sub(r"\s+", "", raw).rstrip(".,;)/")


REFERENCES_HEAD = re.compile(r"^\s*(?:References|REFERENCES|Bibliography)\s*$", re.MULTILINE)


def _references(full: str) -> str:
    heads = list(REFERENCES_HEAD.finditer(full))
    return full[heads[-1].end():] if heads else ""


_ENTRY_START = re.compile(r"\n(?=[A-Z][^\n]{0,120}?\((?:19|20)\d\d[a-z]?\)\.)")


def _entry_at(references: str, at: int) -> str:
    """The reference entry around offset ``at``: from its start to the next entry's start."""
    starts = [0] + [m.start() for m in _ENTRY_START.finditer(references)] + [len(references)]
    begin = max(s for s in starts if s <= at)
    return references[begin:min(s for s in starts if s > at)]


def _cited(references: str, cite: str, year: str, note: str) -> str | None:
    """The entry a citation ('Zeileis, Leisch, Hornik, and Kleiber (2002)') names: first author and year."""
    surname = re.split(r"[ ,]", cite.strip())[0]
    suffix = re.search(rf"\({year}([a-z]?)\)", note)
    key = re.compile(rf"^{re.escape(surname)}\b[^\n]{{0,120}}?\({year}{suffix.group(1) if suffix else ''}\)",
                     re.MULTILINE)
    match = key.search(references)
    if match:
        return _entry_at(references, match.start())
    return _initials_entry(references, surname, year + (suffix.group(1) if suffix else ""))


# An entry that opens with the initials before the family name ('G. Gorjanc. Working with ...', R News and
# The R Journal), and the next such opening, which ends it.
_INITIALS = r"(?:[A-Z]\.[ -]?)+ ?"
_INITIALS_START = re.compile(rf"\n(?={_INITIALS}[A-Z][\w'’-]+[.,])")


def _initials_entry(references: str, surname: str, year: str) -> str | None:
    """The entry by ``surname`` in ``year`` where entries open with initials and print the year at their end
    ('G. Gorjanc. Working with unknown values: the gdata package. R News, 7(1):24–26, 2007.')."""
    for match in re.finditer(rf"^{_INITIALS}{re.escape(surname)}\b", references, re.MULTILINE):
        rest = references[match.start():]
        following = _INITIALS_START.search(rest, 1)
        entry = rest[:following.start() if following else 400]
        if re.search(rf"\b{year}\b", entry):
            return entry
    return None


def _titled(references: str, title: str) -> str | None:
    """The reference entry that cites this very title (how a vignette points at its published version):
    the entry's opening up to the title, and what follows the title up to the next entry."""
    flat = _flat(references)
    match = re.search(r"\W+".join(map(re.escape, re.findall(r"\w+", title)[:8])), flat, re.IGNORECASE)
    if match is None:
        return None
    before = flat[max(0, match.start() - 60):match.start()]
    after = flat[match.end():match.end() + 300]
    following = re.search(
        r"\. (?=[A-Z][\w'’\-]+,? (?:[A-Z]{1,3}[,( ]|[A-Z]\.))|(?<=\d\.) (?=[A-Z]\. [A-Z])", after
    )
    year = re.search(r"\((\d{4})[a-z]?\)\.\W*$", before)
    return (f"({year.group(1)}). " if year else "") + "“" + match.group() + after[:following.start() + 1
                                                                                    if following else None]


def _from_reference(article: PdfArticle, entry: str | None) -> None:
    """Venue, year and DOI of a reference entry, where the article lacks them."""
    if not entry:
        return
    flat = _flat(entry)
    # (a journal's name ending in 'Journal' has up to three capitalised words before it: 'The R Journal')
    venue = (re.search(r"[.”\"]\s*”?\s*((?:J\.|Journal|(?:[A-Z][\w-]* ){1,3}Journal)[^,.”]*)[,.]", flat)
             # or a name followed by volume(issue):pages ('. R News, 7(1):24–26, 2007.')
             or re.search(r"\.\s+([A-Z][^,.”]*?),\s*\d+\s*\(\d+\)\s*:\s*\d", flat))
    if venue and article.venue is None:
        article.venue = _venue(venue.group(1))
    elif article.venue and re.search(rf"[.”\"]\s*The {re.escape(article.venue)},", flat):
        # A journal whose name opens with 'The', which prose lower-cases ('published in the R Journal
        # (Bürkner 2018)'; 'the American Statistician'): named as its own citation names it.
        article.venue = f"The {article.venue}"
    year = re.search(r"\((\d{4})[a-z]?\)|, (\d{4})\.", flat)
    if year and article.year is None:
        article.year = int(year.group(1) or year.group(2))
    doi = _DOI.search(entry)
    if doi and article.doi is None:
        article.doi = _doi_text(doi.group(1))
