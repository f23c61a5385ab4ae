package controller

// zkAPI over zkpaths/zkclient: error mapping onto the controller's
// sentinels (the original error stays matchable with errors.Is too).

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths/zkclient"
)

type zkAdapter struct {
	c *zkclient.Client
}

func newZkAdapter(c *zkclient.Client) zkAPI { return &zkAdapter{c: c} }

func mapZkErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zkclient.ErrControllerMoved):
		return fmt.Errorf("%w: %w", ErrControllerMoved, err)
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: %w", errNoNode, err)
	case errors.Is(err, zk.ErrBadVersion):
		return fmt.Errorf("%w: %w", errBadVersion, err)
	case errors.Is(err, zk.ErrNodeExists):
		return fmt.Errorf("%w: %w", errNodeExists, err)
	}
	return err
}

func (a *zkAdapter) GetData(path string) ([]byte, zkStat, error) {
	data, st, err := a.c.Get(path)
	if err != nil {
		return nil, zkStat{}, mapZkErr(err)
	}
	return data, zkStat{Version: st.Version, Czxid: st.Czxid}, nil
}

func (a *zkAdapter) GetChildren(path string) ([]string, error) {
	kids, err := a.c.Children(path)
	return kids, mapZkErr(err)
}

func (a *zkAdapter) WatchData(path string, fn func()) func()     { return a.c.WatchData(path, fn) }
func (a *zkAdapter) WatchChildren(path string, fn func()) func() { return a.c.WatchChildren(path, fn) }

func (a *zkAdapter) RegisterControllerAndIncrementEpoch(id int32) (int32, int32, error) {
	e, v, err := a.c.RegisterControllerAndIncrementEpoch(id)
	return e, v, mapZkErr(err)
}

func (a *zkAdapter) FencedCreate(epochZkVersion int32, path string, data []byte) error {
	_, err := a.c.FencedMulti(epochZkVersion, zkclient.CreateOp(path, data, zkclient.Persistent))
	return mapZkErr(err)
}

func (a *zkAdapter) FencedSet(epochZkVersion int32, path string, data []byte, version int32) (int32, error) {
	res, err := a.c.FencedMulti(epochZkVersion, zkclient.SetOp(path, data, version))
	if err != nil {
		return 0, mapZkErr(err)
	}
	if len(res) == 0 || res[0].Stat == nil {
		return 0, fmt.Errorf("controller: fenced set %s: no stat in the multi result", path)
	}
	return res[0].Stat.Version, nil
}

func (a *zkAdapter) FencedDelete(epochZkVersion int32, path string, version int32) error {
	_, err := a.c.FencedMulti(epochZkVersion, zkclient.DeleteOp(path, version))
	return mapZkErr(err)
}

// FencedDeleteRecursive deletes the children depth-first, each delete fenced.
func (a *zkAdapter) FencedDeleteRecursive(epochZkVersion int32, path string) error {
	kids, err := a.c.Children(path)
	if err != nil {
		return mapZkErr(err)
	}
	for _, k := range kids {
		if err := a.FencedDeleteRecursive(epochZkVersion, path+"/"+k); err != nil && !errors.Is(err, errNoNode) {
			return err
		}
	}
	return a.FencedDelete(epochZkVersion, path, -1)
}

func (a *zkAdapter) OnSessionExpired(fn func()) func() { return a.c.OnSessionExpired(fn) }
func (a *zkAdapter) OnNewSession(fn func()) func()     { return a.c.OnNewSession(fn) }
