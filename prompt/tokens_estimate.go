package prompt

import (
	"unicode"
	"unicode/utf8"
)

// Estimator weights in thousandths of a token, fitted against o200k_base on
// the roleplay fixtures in testdata/tokens (zh.txt, en.txt) and checked on
// the character cards beside them. Chinese costs most per character: o200k
// keeps the common Han characters whole but splits rarer ones (names, 笠,
// 婉) into two byte tokens, while nearly every English word is one token
// with its leading space. Kana, Hangul, other scripts and symbols are rough
// defaults from spot checks, not fitted: o200k spends anywhere from half a
// token (everyday phrases) to nearly one (literary prose) on each kana or
// Hangul syllable, and Calibration corrects what is left.
const (
	estHan           = 940  // a Han character
	estKana          = 600  // hiragana, katakana: common words merge
	estHangul        = 800  // a Hangul syllable or jamo
	estCJKPunct      = 750  // 「」，。！？ and other full-width forms; often merged
	estWord          = 1000 // a run of letters with its leading space
	estLongLetter    = 150  // each letter past the sixth: long words split
	estCapital       = 250  // a capitalised word of five letters or more: names split
	estContraction   = 300  // 's, 't, 're after ': most merge into the word
	estCurlySuffix   = 1000 // ’s, ’t after ’: a token of its own
	estOtherLetter   = 100  // extra for each non-ASCII letter (é, ж, α)
	estDigits        = 1000 // each group of up to three digits
	estPunct         = 850  // a run of punctuation: ." ,” ...
	estPunctExtra    = 200  // each mark after the first in a run
	estNewline       = 1000 // a run of line breaks after a word
	estNewlineMerged = 200  // line breaks after punctuation join its token
	estSpaces        = 1000 // two or more spaces or tabs: indentation
	estSymbol        = 1200 // an emoji or other symbol
	estJoiner        = 500  // a zero-width joiner or variation selector
)

// estRun is the kind of run the estimator is in the middle of.
type estRun uint8

const (
	estNone estRun = iota
	estInWord
	estInSuffix
	estInDigits
	estInPunct
	estInSpaces
	estInNewlines
)

// tokenEstimator is the state of one EstimateTokens pass. It lives on the
// stack, so an estimate allocates nothing.
type tokenEstimator struct {
	milli     int64  // running total in thousandths of a token
	run       estRun // the run being read
	n         int    // letters, digits or marks in the run
	capital   bool   // the word began with an upper-case letter
	curly     bool   // the suffix followed ’, not '
	afterMark bool   // the last run before any whitespace was punctuation
}

// EstimateTokens returns a quick estimate of how many o200k_base tokens text
// takes, within about 10% for Chinese and English prose and a mix of both.
// It makes one pass over the bytes and allocates nothing, so it suits every
// turn; use TokenCounter where an exact count is worth a tokenizer pass, and
// Calibration to correct for a model whose tokenizer differs. It rounds up,
// so any non-empty text counts at least one token.
func EstimateTokens(text string) int {
	var e tokenEstimator
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			// Most bytes of English carry on a word: keep that path short.
			if (e.run == estInWord || e.run == estInSuffix) && estIsLetter(c) {
				e.n++
				i++
				continue
			}
			i += e.ascii(text, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		e.nonASCII(text, i, r, size)
		i += size
	}
	e.end()
	return int((e.milli + 999) / 1000)
}

// ascii reads the ASCII byte at text[i] and returns how many bytes it used.
func (e *tokenEstimator) ascii(text string, i int) int {
	c := text[i]
	switch {
	case estIsLetter(c):
		e.start(estInWord)
		e.capital = c <= 'Z'
	case '0' <= c && c <= '9':
		e.extend(estInDigits)
	case c == ' ' || c == '\t':
		if e.run == estInNewlines {
			return 1
		}
		e.extend(estInSpaces)
	case c == '\n' || c == '\r':
		if e.run == estInSpaces {
			// Spaces before a line break belong to the break's token.
			e.run = estInNewlines
		}
		e.extend(estInNewlines)
	case c == '\'' && e.run == estInWord && estLetterAt(text, i+1):
		e.start(estInSuffix)
		e.curly = false
		e.n = 0
	default:
		e.extend(estInPunct)
	}
	return 1
}

// nonASCII reads the rune r of size bytes at text[i].
func (e *tokenEstimator) nonASCII(text string, i int, r rune, size int) {
	switch {
	case 0x4E00 <= r && r <= 0x9FFF, 0x3400 <= r && r <= 0x4DBF,
		0xF900 <= r && r <= 0xFAFF, 0x20000 <= r && r <= 0x3FFFF:
		e.single(estHan, false)
	case 0x3040 <= r && r <= 0x30FF, 0x31F0 <= r && r <= 0x31FF, 0xFF66 <= r && r <= 0xFF9F:
		e.single(estKana, false)
	case 0xAC00 <= r && r <= 0xD7AF, 0x1100 <= r && r <= 0x11FF, 0x3130 <= r && r <= 0x318F:
		e.single(estHangul, false)
	case 0x3000 <= r && r <= 0x303F, 0xFF00 <= r && r <= 0xFFEF, 0xFE30 <= r && r <= 0xFE4F:
		e.single(estCJKPunct, true)
	case r == '’' && e.run == estInWord && estLetterAt(text, i+size):
		e.start(estInSuffix)
		e.curly = true
		e.n = 0
	case r == 0x200D, 0xFE00 <= r && r <= 0xFE0F:
		e.single(estJoiner, true)
	case r == 0x00A0 || 0x2000 <= r && r <= 0x200A:
		e.extend(estInSpaces)
	case 0x2010 <= r && r <= 0x205E:
		// Dashes, ellipses and curly quotes behave like ASCII punctuation.
		e.extend(estInPunct)
	case unicode.IsLetter(r) || unicode.IsMark(r):
		if e.run != estInWord && e.run != estInSuffix {
			e.start(estInWord)
			e.capital = unicode.IsUpper(r)
		} else {
			e.n++
		}
		e.milli += estOtherLetter
	case unicode.IsSpace(r):
		e.extend(estInSpaces)
	case unicode.IsNumber(r):
		e.extend(estInDigits)
	default:
		e.single(estSymbol, true)
	}
}

// extend continues the current run if it is of kind k, or starts one.
func (e *tokenEstimator) extend(k estRun) {
	if e.run == k {
		e.n++
		return
	}
	e.start(k)
}

// start ends the current run and begins one of kind k with one element.
func (e *tokenEstimator) start(k estRun) {
	e.end()
	e.run = k
	e.n = 1
}

// single ends the current run and adds w for a character that stands alone.
func (e *tokenEstimator) single(w int64, mark bool) {
	e.end()
	e.milli += w
	e.afterMark = mark
}

// end adds the cost of the current run and leaves none open.
func (e *tokenEstimator) end() {
	switch e.run {
	case estNone:
		return
	case estInWord:
		e.milli += estWord
		if e.n > 6 {
			e.milli += int64(e.n-6) * estLongLetter
		}
		if e.capital && e.n >= 5 {
			e.milli += estCapital
		}
		e.afterMark = false
	case estInSuffix:
		if e.curly {
			e.milli += estCurlySuffix
		} else {
			e.milli += estContraction
		}
		e.afterMark = false
	case estInDigits:
		e.milli += int64((e.n+2)/3) * estDigits
		e.afterMark = false
	case estInPunct:
		e.milli += estPunct + int64(e.n-1)*estPunctExtra
		e.afterMark = true
	case estInSpaces:
		if e.n >= 2 {
			e.milli += estSpaces
		}
	case estInNewlines:
		if e.afterMark {
			e.milli += estNewlineMerged
		} else {
			e.milli += estNewline
		}
		e.afterMark = false
	}
	e.run, e.n, e.capital = estNone, 0, false
}

// estLetterAt reports whether text has an ASCII letter at byte i.
func estLetterAt(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	return estIsLetter(text[i])
}

// estIsLetter reports whether c is an ASCII letter.
func estIsLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
