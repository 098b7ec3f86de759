package app

import (
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// sceneView renders the light scene kinds (strip, cards, formula, table) with
// plain go-app elements. Heavy or JS-owned kinds have their own components
// (gridView, chartView). Every scene component reports kind:id as its
// CompoID, so when a step's list of scenes changes shape go-app mounts a new
// component instead of morphing, say, a chart figure into a table.
type sceneView struct {
	app.Compo
	Scene scene.Scene
}

func (s *sceneView) CompoID() string { return string(s.Scene.Kind) + ":" + s.Scene.ID }

func (s *sceneView) Render() app.UI {
	sc := s.Scene
	switch {
	case sc.Kind == scene.KindMemoryStrip && sc.Strip != nil:
		return renderStrip(sc)
	case sc.Kind == scene.KindCards:
		return renderCards(sc)
	case sc.Kind == scene.KindFormula && sc.Formula != nil:
		return renderFormula(sc)
	case sc.Kind == scene.KindTable && sc.Table != nil:
		return renderTable(sc)
	case sc.Kind == scene.KindBlockTables && sc.Tables != nil:
		return renderBlockTables(sc)
	case sc.Kind == scene.KindTimeline && sc.Gantt != nil:
		return renderTimeline(sc)
	case sc.Kind == scene.KindMemoryStack && sc.Memory != nil:
		return renderMemoryStack(sc)
	case sc.Kind == scene.KindSlots && sc.Slots != nil:
		return renderSlots(sc)
	case sc.Kind == scene.KindRadixTree && sc.Radix != nil:
		return renderRadix(sc)
	case sc.Kind == scene.KindCluster && sc.Cluster != nil:
		return renderCluster(sc)
	case sc.Kind == scene.KindTiers && sc.Tiers != nil:
		return renderTiers(sc)
	case sc.Kind == scene.KindJourney && sc.Journey != nil:
		return renderJourney(sc)
	case sc.Kind == scene.KindTokens && sc.Tokens != nil:
		return renderTokens(sc)
	}
	return app.Figure().Class("scene", "scene-unknown").DataSet("kind", string(sc.Kind)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Text(sc.Title),
		app.P().Text("This scene kind ("+string(sc.Kind)+") has no renderer."),
	)
}

// renderScenes returns one component per scene of a step. The heavy kinds
// get their data through a func (a fresh closure on every render) so go-app
// does not deep-compare thousands of blocks or points.
func renderScenes(scenes []scene.Scene, motion bool) []app.UI {
	out := make([]app.UI, 0, len(scenes))
	for _, sc := range scenes {
		switch {
		case sc.Kind == scene.KindBlockGrid && sc.Grid != nil:
			grid := sc.Grid
			out = append(out, &gridView{SceneID: sc.ID, Title: sc.Title, Marks: sc.Marks, Get: func() *scene.BlockGrid { return grid }})
		case sc.Kind == scene.KindPools && sc.Grid != nil && sc.Strip != nil:
			pools := sc
			out = append(out, &poolsView{SceneID: sc.ID, Get: func() *scene.Scene { return &pools }})
		case sc.Kind == scene.KindChart && sc.Chart != nil:
			chart := sc.Chart
			out = append(out, &chartView{SceneID: sc.ID, Title: sc.Title, Motion: motion, Marks: sc.Marks, Get: func() *scene.Chart { return chart }})
		default:
			out = append(out, &sceneView{Scene: sc})
		}
	}
	return out
}
